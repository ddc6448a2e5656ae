/**
 * `npx tsx bench/task-get-http.ts [--rounds 5] [--gets 1000] [--burst 4000] [--profile DIR
 * [--profile-ids A,B] [--no-figure]]`: figure 8 of `npm run bench` alone (`tasks/get` over HTTP and
 * stdio, ours with and without the fast path, B0, the floor; its rows are `TASK_GET_WORKLOAD` in
 * bench/figures/task-get.ts), without PostgreSQL, as the same markdown table. Its HTTP 16-client
 * rows come from `wrk` when it is on the PATH (5 s each; `--burst` then sizes the stdio rows only). `--profile DIR` then
 * runs the rows `--profile-ids` names (default ours on SQLite over HTTP, fast path, then through the
 * SDK; any row id of figure 8, a PostgreSQL one on a throwaway server) once more under
 * `node --cpu-prof` for a 16-client burst of twice `--burst` reads and prints where its CPU time
 * went. `--no-figure` skips the figure and only profiles.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pool } from './client/tasks.js';
import { taskGetLanes, taskGetSpec, TASK_GET_WORKLOAD } from './figures/task-get.js';
import { parseConfig } from './lib/config.js';
import { prepareEntries } from './lib/entries.js';
import { withServer } from './lib/proc.js';
import { summarizeProfile } from './lib/profile.js';
import { renderMarkdown } from './lib/report.js';
import { openBenchEnv } from './lib/variants.js';
import { runBench } from './main.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    gets: { type: 'string', default: '1000' },
    burst: { type: 'string', default: '4000' },
    profile: { type: 'string' },
    'profile-ids': { type: 'string', default: 'http-fast,http-sdk' },
    'no-figure': { type: 'boolean' },
  },
});
const BURST = Number(values.burst);
const CLIENTS = 16;

async function main(): Promise<void> {
  const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  const argv = ['--figures', '8', '--no-postgres', '--rounds', values.rounds, '--task-gets', values.gets];
  const config = parseConfig([...argv, '--task-get-burst', values.burst]);
  const entries = values['profile-ids'].split(',').map((id) => {
    const entry = TASK_GET_WORKLOAD.find((e) => e.id === id);
    if (entry === undefined)
      throw new Error(`no figure-8 row ${id}: use one of ${TASK_GET_WORKLOAD.map((e) => e.id).join(', ')}`);
    return entry;
  });
  if (values['no-figure'] !== true) process.stdout.write(renderMarkdown(await runBench(config, log)));
  if (values.profile === undefined) return;
  // The servers run bundled, as in the figure (the figure's run bundles them itself).
  if (values['no-figure'] === true) await prepareEntries(log);
  const env = await openBenchEnv({ noPostgres: !entries.some((e) => e.server === 'postgres'), log });
  try {
    for (const entry of entries) {
      const id = entry.id;
      const dir = join(values.profile, id);
      log(`profiling ${id} under --cpu-prof into ${dir}`);
      const spec = taskGetSpec(env, entry, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=200']);
      await withServer(spec, entry.transport, async (server) => {
        const lanes = await taskGetLanes(server, entry, CLIENTS);
        await pool(BURST * 2, CLIENTS, async (_i, lane) => {
          const reader = lanes[lane % lanes.length]!;
          await reader.get(reader.taskId);
        });
      });
      const file = readdirSync(dir)
        .filter((f) => f.endsWith('.cpuprofile'))
        .sort()
        .at(-1);
      if (file === undefined) throw new Error(`no .cpuprofile in ${dir}`);
      process.stdout.write(`\n${entry.label}: ${summarizeProfile(join(dir, file), BURST * 2, CLIENTS)}\n`);
    }
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
