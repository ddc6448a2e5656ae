/**
 * `npx tsx bench/fast-cpu.ts [--requests 8000] [--rounds 3]`: the server's own CPU time per
 * `tasks/get` on the fast path (issue 14), read from `/proc/PID/stat` (user + system ticks) around
 * a 16-client burst on the bench server (`bench/servers/terminus.ts`, SQLite, 2026-07-28 Tasks
 * extension), and the same for the floor (`bench/servers/floor.ts`). CPU time is what a loaded
 * machine distorts least. The clients run in this process; their CPU per request is printed apart
 * (`process.cpuUsage`), as it competes with the server's on 2 cores. Medians of `--rounds`, the
 * load average at start and end printed.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { pool, submitTask } from './client/tasks.js';
import { prepareEntries } from './lib/entries.js';
import { tasksExtClient } from './client/tasks-ext.js';
import { BENCH_TOKEN, withServer, type RunningServer } from './lib/proc.js';
import { openBenchEnv } from './lib/variants.js';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '8000' }, rounds: { type: 'string', default: '3' } },
});
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);
const CLIENTS = 16;
const TICK_US = 10_000; // USER_HZ is 100 on Linux

/** User + system CPU microseconds the process has used so far. */
function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

/** Server and client (this process) CPU us per `tasks/get` over one 16-client burst (after a warm-up burst). */
async function measure(server: RunningServer, modern: boolean): Promise<{ server: number; client: number }> {
  let gets: (() => Promise<unknown>)[];
  if (modern) {
    gets = await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        const client = tasksExtClient(server.url!, BENCH_TOKEN);
        const created = await client.call('tools/call', { name: 'bench_sleep', arguments: { ms: 3_600_000 } });
        return () => client.call('tasks/get', { taskId: created.taskId });
      }),
    );
  } else {
    gets = await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        const client = await server.connect();
        const { taskId } = await submitTask(client, 'bench_sleep', { ms: 3_600_000 });
        return () => client.request('tasks/get', { taskId });
      }),
    );
  }
  const burst = async (count: number): Promise<void> => {
    await pool(count, CLIENTS, async (_i, lane) => {
      await gets[lane % gets.length]!();
    });
  };
  await burst(2_000);
  const before = cpuUs(server.child.pid!);
  const client = process.cpuUsage();
  await burst(REQUESTS);
  const used = process.cpuUsage(client);
  return { server: (cpuUs(server.child.pid!) - before) / REQUESTS, client: (used.user + used.system) / REQUESTS };
}

async function main(): Promise<void> {
  const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  const loadStart = loadavg();
  await prepareEntries(log);
  const env = await openBenchEnv({ noPostgres: true, log });
  const runs = { fast: [] as number[], floor: [] as number[] };
  const clients = { fast: [] as number[], floor: [] as number[] };
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      const fastSpec = env.spec('sqlite', { pollMs: 1000, db: env.freshDb('sqlite', `cpu${round}`) });
      const fast = await withServer(fastSpec, 'http', (server) => measure(server, true));
      runs.fast.push(fast.server);
      clients.fast.push(fast.client);
      const floorSpec = env.spec('floor', { pollMs: 1000, db: env.freshDb('floor', `cpu${round}`) });
      const floor = await withServer(floorSpec, 'http', (server) => measure(server, false));
      runs.floor.push(floor.server);
      clients.floor.push(floor.client);
      log(
        `round ${round + 1}/${ROUNDS}: fast ${runs.fast.at(-1)!.toFixed(0)} us, floor ${runs.floor.at(-1)!.toFixed(0)} us`,
      );
    }
  } finally {
    await env.close();
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const fmt = (l: number[]): string => l.map((x) => x.toFixed(2)).join(' / ');
  process.stdout.write(
    `server CPU per tasks/get at ${CLIENTS} clients (user + system, median of ${ROUNDS} bursts of ${REQUESTS}); ` +
      `load average ${fmt(loadStart)} at start, ${fmt(loadavg())} at end\n` +
      `fast path: ${median(runs.fast).toFixed(0)} us (${runs.fast.map((x) => x.toFixed(0)).join(', ')})\n` +
      `floor:     ${median(runs.floor).toFixed(0)} us (${runs.floor.map((x) => x.toFixed(0)).join(', ')})\n` +
      `fast / floor CPU: ${(median(runs.fast) / median(runs.floor)).toFixed(2)}x\n` +
      `client CPU per request (the bench's fetch clients): fast path ${median(clients.fast).toFixed(0)} us, floor ${median(clients.floor).toFixed(0)} us\n`,
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
