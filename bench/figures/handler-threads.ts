/**
 * Figure 10 (issue 14): another caller's `tasks/get` latency while 16 CPU-bound handlers are in
 * flight. Each round starts a fresh `terminus serve` (the built CLI, `dist/cli/main.js`: worker
 * processes import the demo tools' module by URL, which a bundle would not keep) on a fresh database,
 * creates the caller's own task and lets it finish, measures up to `threadReads` sequential
 * `tasks/get` of it 5 ms apart (a poller, not a flood) idle, then submits 16 `build_report` tasks
 * (hash chains in 20 ms slices) and, once the handlers that can run have started, measures again.
 * Each phase is bounded by `threadPhaseMs`: on the serving thread a read may wait a quarter second.
 *
 * With `--workers 2` a node runs one task per worker: 2 of the 16 run at a time, the rest wait
 * unclaimed. That is the design (a worker's death takes only its own task), so it is what this
 * measures. The target: loaded p99 at most 2x idle p99 with `--workers 2`; the serving thread,
 * one worker (a core left to serve on two) and the reniced workers are reference rows (on SQLite only: the serving thread's loaded phase runs
 * to its time bound, and the store is not what it shows).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { tasksExtClient, type TasksExtClient } from '../client/tasks-ext.js';
import { fmt, ratioTarget, type Row, type Target } from '../lib/report.js';
import { ROOT } from '../lib/root.js';
import { percentile, summarize } from '../lib/stats.js';
import type { Database } from '../lib/variants.js';
import type { FigureContext, FigureResult } from './context.js';

const CLI = join(ROOT, 'dist/cli/main.js');

/** Why the built CLI cannot stand for today's code: missing, or older than a file under src/. */
function builtCliProblem(): string | undefined {
  if (!existsSync(CLI)) return 'dist/cli/main.js is missing: run `npm run build` first';
  const built = statSync(CLI).mtimeMs;
  const src = join(ROOT, 'src');
  const newer = readdirSync(src, { recursive: true, encoding: 'utf8' }).find(
    (file) => file.endsWith('.ts') && statSync(join(src, file)).mtimeMs > built,
  );
  return newer === undefined ? undefined : `dist/ is older than src/${newer}: run \`npm run build\` first`;
}
const LOAD_TASKS = 16;

interface ThreadVariant {
  readonly id: string;
  readonly db: 'sqlite' | 'postgres';
  readonly label: string;
  readonly flags: readonly string[];
  /** The row the target reads. */
  readonly judged: boolean;
}

/** The rows of figure 10, in the order each round runs them. */
export const THREAD_VARIANTS: readonly ThreadVariant[] = [
  { id: 'serving', db: 'sqlite', label: 'ours SQLite, handlers on the serving thread', flags: [], judged: false },
  { id: 'workers', db: 'sqlite', label: 'ours SQLite, --workers 2', flags: ['--workers', '2'], judged: true },
  { id: 'workers1', db: 'sqlite', label: 'ours SQLite, --workers 1', flags: ['--workers', '1'], judged: false },
  {
    id: 'nice',
    db: 'sqlite',
    label: 'ours SQLite, --workers 2 --workers-nice 10',
    flags: ['--workers', '2', '--workers-nice', '10'],
    judged: false,
  },
  { id: 'pg-workers', db: 'postgres', label: 'ours PostgreSQL, --workers 2', flags: ['--workers', '2'], judged: true },
];

async function startServe(db: Database, flags: readonly string[]): Promise<{ child: ChildProcess; url: string }> {
  const dbArgs = db.kind === 'sqlite' ? ['--db', db.path] : ['--db', db.url, '--pg-schema', db.schema];
  // One principal drives everything: no per-caller limits in the way of the figure.
  const args = [
    CLI,
    'serve',
    '--port',
    '0',
    ...dbArgs,
    '--polls-per-minute',
    '0',
    '--creates-per-minute',
    '0',
    ...flags,
  ];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`terminus serve did not listen within 30 s: ${stderr}`)), 30_000);
      child.once('exit', (code) => reject(new Error(`terminus serve exited ${code}: ${stderr}`)));
      createInterface({ input: child.stdout }).on('line', (line) => {
        const match = /listening on (\S+)/.exec(line);
        if (match !== null) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
    return { child, url };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

async function sampleGets(client: TasksExtClient, taskId: string, reads: number, phaseMs: number): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + phaseMs;
  for (let i = 0; i < reads && performance.now() < end; i += 1) {
    const start = performance.now();
    await client.call('tasks/get', { taskId });
    times.push(performance.now() - start);
    await sleep(5);
  }
  return times;
}

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + 60_000;
  while (!(await probe())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface RoundResult {
  readonly idle: number[];
  readonly loaded: number[];
}

async function round(db: Database, variant: ThreadVariant, reads: number, phaseMs: number): Promise<RoundResult> {
  const { child, url } = await startServe(db, variant.flags);
  try {
    const client = tasksExtClient(url);
    const submit = async (args: Record<string, unknown>): Promise<string> =>
      String((await client.call('tools/call', { name: 'build_report', arguments: args })).taskId);
    const mine = await submit({ sections: 1, sectionSeconds: 0 });
    await until(
      'the caller’s own task',
      async () => (await client.call('tasks/get', { taskId: mine })).status === 'completed',
    );
    const idle = await sampleGets(client, mine, reads, phaseMs);
    const load = await Promise.all(
      Array.from({ length: LOAD_TASKS }, () => submit({ sections: 1, sectionSeconds: 600 })),
    );
    // Every handler that can run has started (progress "section 1" is its first write).
    const threads = variant.flags.indexOf('--workers');
    const running = threads === -1 ? LOAD_TASKS : Number(variant.flags[threads + 1]);
    await until('the handlers started', async () => {
      const started = await Promise.all(
        load.map(async (taskId) => {
          const got = await client.call('tasks/get', { taskId });
          return typeof got.statusMessage === 'string' && got.statusMessage.startsWith('section 1');
        }),
      );
      return started.filter(Boolean).length >= running;
    });
    const loaded = await sampleGets(client, mine, reads, phaseMs);
    return { idle, loaded };
  } finally {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null)
      await new Promise((resolve) => child.once('exit', resolve));
  }
}

export async function runHandlerThreads(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const built = builtCliProblem();
  const pgNotRun = env.variants.find((v) => v.id === 'postgres')?.notRun;
  const notRun = (v: ThreadVariant): string | undefined => built ?? (v.db === 'postgres' ? pgNotRun : undefined);
  const results = new Map<
    string,
    { idleP50: number[]; idleP99: number[]; loadedP50: number[]; loadedP99: number[]; reads: number[] }
  >();
  for (let n = 0; n < config.rounds; n += 1) {
    for (const variant of THREAD_VARIANTS) {
      if (notRun(variant) !== undefined) continue;
      ctx.log(`figure 10: round ${n + 1}/${config.rounds}, ${variant.id}`);
      const r = await round(
        env.freshDb(variant.db, `threads-${variant.id}`),
        variant,
        config.threadReads,
        config.threadPhaseMs,
      );
      const entry = results.get(variant.id) ?? { idleP50: [], idleP99: [], loadedP50: [], loadedP99: [], reads: [] };
      entry.idleP50.push(percentile(r.idle, 50));
      entry.idleP99.push(percentile(r.idle, 99));
      entry.loadedP50.push(percentile(r.loaded, 50));
      entry.loadedP99.push(percentile(r.loaded, 99));
      entry.reads.push(r.loaded.length);
      results.set(variant.id, entry);
    }
  }

  const rows: Row[] = [];
  const targets: Target[] = [];
  const setting = `${LOAD_TASKS} build_report tasks, up to ${config.threadReads} reads 5 ms apart per phase`;
  for (const variant of THREAD_VARIANTS) {
    const reason = notRun(variant);
    const entry = results.get(variant.id);
    const idleP99 = summarize(entry?.idleP99 ?? []);
    const loadedP99 = summarize(entry?.loadedP99 ?? []);
    for (const [metric, values] of [
      ['idle tasks/get p50 (ms)', entry?.idleP50],
      ['idle tasks/get p99 (ms)', entry?.idleP99],
      ['loaded tasks/get p50 (ms)', entry?.loadedP50],
      ['loaded tasks/get p99 (ms)', entry?.loadedP99],
    ] as const) {
      if (reason !== undefined) {
        rows.push({ figure: 10, metric, variant: variant.label, setting, notRun: reason });
        continue;
      }
      const loadedRow = metric === 'loaded tasks/get p99 (ms)';
      rows.push({
        figure: 10,
        metric,
        variant: variant.label,
        setting,
        value: summarize(values ?? []),
        ...(loadedRow ? { ratio: { to: 'idle p99', value: loadedP99.median / idleP99.median } } : {}),
        ...(loadedRow
          ? {
              note: `${fmt(summarize(entry?.reads ?? []).median)} loaded reads per round (bounded at ${config.threadPhaseMs / 1000} s)`,
            }
          : {}),
      });
    }
    if (variant.judged) {
      targets.push(
        ratioTarget({
          issue: 14,
          name: `another caller's tasks/get p99 with 16 CPU-bound handlers, --workers 2 (${variant.db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}) vs idle`,
          measured: loadedP99.median / idleP99.median,
          bound: 2,
          atLeast: false,
          unit: 'x idle p99',
          detail: `${fmt(loadedP99.median)} vs ${fmt(idleP99.median)} ms`,
          ...(reason === undefined ? {} : { reason }),
        }),
      );
    }
  }
  return { rows, targets };
}
