/**
 * `npx tsx bench/task-get-2025.ts [--rounds 3] [--gets 500] [--burst 2000]`: `tasks/get` on the
 * 2025-11-25 wire, which is the one B0 speaks, issue 14 item 1 (the fast path for that wire over
 * HTTP sessions and for stdio). Rounds interleaved, one fresh server per sample:
 *
 * - HTTP, one session per client: ours with the fast path, ours through the SDK
 *   (`--no-fast-path`), B0 (SDK 1.32, InMemoryTaskStore);
 * - stdio, one connection (its requests pipelined by up to 16 in flight): the same three.
 *
 * p50 of sequential calls at 1 client, requests per second at 16 in flight. The client shares
 * the 2 cores with the server, so only the ratios are the figure; the load average is printed.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { RpcClient } from './client/rpc.js';
import { pool, submitTask } from './client/tasks.js';
import { prepareEntries } from './lib/entries.js';
import { withServer, type RunningServer, type ServerSpec, type Transport } from './lib/proc.js';
import { percentile } from './lib/stats.js';
import { openBenchEnv } from './lib/variants.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    gets: { type: 'string', default: '500' },
    burst: { type: 'string', default: '2000' },
  },
});
const ROUNDS = Number(values.rounds);
const GETS = Number(values.gets);
const BURST = Number(values.burst);
const WIDTH = 16;
const WARMUP = 200;

type Server = 'fast' | 'sdk' | 'B0';
const LABELS: Record<Server, string> = {
  fast: 'ours, fast path',
  sdk: 'ours, through the SDK',
  B0: 'B0 SDK 1.32 in-memory',
};

interface Sample {
  readonly p50Ms: number;
  readonly perSecond: number;
}

async function measure(server: RunningServer): Promise<Sample> {
  // HTTP: one session per lane; stdio: the one connection, requests pipelined.
  const clients: RpcClient[] =
    server.transport === 'stdio'
      ? [await server.connect()]
      : await Promise.all(Array.from({ length: WIDTH }, () => server.connect()));
  const lanes = await Promise.all(
    clients.map(async (client) => ({ client, ...(await submitTask(client, 'bench_sleep', { ms: 3_600_000 })) })),
  );
  const first = lanes[0]!;
  const get = async (lane: (typeof lanes)[number]): Promise<string> =>
    String((await lane.client.request('tasks/get', { taskId: lane.taskId })).status);
  for (let i = 0; i < WARMUP; i += 1) await get(first);
  const times: number[] = [];
  for (let i = 0; i < GETS; i += 1) {
    const start = performance.now();
    const status = await get(first);
    times.push(performance.now() - start);
    if (status !== 'working') throw new Error(`task is ${status}`);
  }
  const start = performance.now();
  await pool(BURST, WIDTH, async (_i, lane) => void (await get(lanes[lane % lanes.length]!)));
  return { p50Ms: percentile(times, 50), perSecond: BURST / ((performance.now() - start) / 1000) };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fmt = (n: number, digits = 2): string => n.toLocaleString('en-US', { maximumFractionDigits: digits });

async function main(): Promise<void> {
  const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  const loadStart = loadavg();
  await prepareEntries(log);
  const env = await openBenchEnv({ noPostgres: true, log });
  const specOf = (server: Server, transport: Transport): ServerSpec => {
    if (server === 'B0') return env.spec('B0', { pollMs: 1000 });
    const base = env.spec('sqlite', { pollMs: 1000, db: env.freshDb('sqlite', `${server}-${transport}`) });
    return { ...base, args: [...base.args, ...(server === 'sdk' ? ['--no-fast-path'] : [])] };
  };
  const servers: Server[] = ['fast', 'sdk', 'B0'];
  const transports: Transport[] = ['http', 'stdio'];
  const samples = new Map<string, Sample[]>();
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const transport of transports) {
        for (const server of servers) {
          log(`round ${round + 1}/${ROUNDS}: ${transport} ${server} (load ${fmt(loadavg()[0] ?? NaN)})`);
          const sample = await withServer(specOf(server, transport), transport, measure);
          const key = `${transport} ${server}`;
          samples.set(key, [...(samples.get(key) ?? []), sample]);
        }
      }
    }
    const loadEnd = loadavg();
    const med = (key: string, field: keyof Sample): number => median((samples.get(key) ?? []).map((s) => s[field]));
    const range = (key: string, field: keyof Sample): string => {
      const xs = (samples.get(key) ?? []).map((s) => s[field]);
      const digits = field === 'p50Ms' ? 3 : 0;
      return `${fmt(Math.min(...xs), digits)}-${fmt(Math.max(...xs), digits)}`;
    };
    const out = [
      `tasks/get on the 2025-11-25 wire, ${ROUNDS} rounds interleaved, medians (range); ${GETS} sequential gets, ${BURST} at ${WIDTH} in flight`,
      `load average at start ${loadStart.map((l) => fmt(l)).join(' / ')}, at end ${loadEnd.map((l) => fmt(l)).join(' / ')} (1/5/15 min)`,
      '',
      '| transport | server | p50, 1 client (ms) | req/s, 16 in flight |',
      '| --- | --- | --- | --- |',
    ];
    for (const transport of transports) {
      for (const server of servers) {
        const key = `${transport} ${server}`;
        out.push(
          `| ${transport} | ${LABELS[server]} | ${fmt(med(key, 'p50Ms'), 3)} (${range(key, 'p50Ms')}) | ${fmt(med(key, 'perSecond'), 0)} (${range(key, 'perSecond')}) |`,
        );
      }
    }
    out.push('', '| transport | ratio | p50, 1 client | req/s, 16 in flight |', '| --- | --- | --- | --- |');
    for (const transport of transports) {
      for (const [a, b] of [
        ['fast', 'sdk'],
        ['fast', 'B0'],
        ['sdk', 'B0'],
      ] as const) {
        const r = (field: keyof Sample): string =>
          fmt(med(`${transport} ${a}`, field) / med(`${transport} ${b}`, field));
        out.push(`| ${transport} | ${a} / ${b} | ${r('p50Ms')}x | ${r('perSecond')}x |`);
      }
    }
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await env.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
