/**
 * Hostile handlers against a running server (issue 30), run by hand:
 *
 *   npm run build && npx tsx bench/attacks.ts [--rounds 3] [--db sqlite|postgres] [--quick]
 *
 * Each attack gets a fresh `terminus serve --fixtures hostile` (the built CLI) on a fresh database:
 * heap bombs (64 MB arrays; 32 MB `JSON.parse` arrays, the shape that aborted the whole process
 * when workers were threads; 64 MB typed arrays, outside the JS heap), a spinner that ignores its
 * cancel, and 200,000 un-awaited `ctx.log` lines, in worker processes, plus the log flood on the
 * serving thread. Meanwhile another caller polls its own task with `tasks/get` and calls a fast
 * tool (`echo`, no task) in turn, 5 ms apart: its p50 and p99 under attack are printed as ratios
 * of its idle p50 and p99 measured just before on the same server, with the server's resident
 * memory (and its workers') before, at the peak and after. Medians over rounds; the load average
 * is printed, since this machine is shared. PostgreSQL: `TERMINUS_TEST_PG_URL`, a fresh schema per
 * server. `test/bench/attacks.test.ts` runs it `--quick` and checks the structure, never a time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { tasksExtClient, type TasksExtClient } from './client/tasks-ext.js';
import { ROOT } from './lib/root.js';
import { percentile, summarize } from './lib/stats.js';

const CLI = join(ROOT, 'dist/cli/main.js');
const HEAP_MB = 256;

/** One attack: its server flags, how it is launched, and when it is over. */
interface Attack {
  readonly id: string;
  readonly label: string;
  /** On `--workers 2` (false: handlers on the serving thread). */
  readonly workers: boolean;
  readonly linuxOnly?: boolean;
  /** Runs the attack to its end; returns what became of it, in words. */
  run(client: TasksExtClient, quick: boolean): Promise<string>;
}

async function task(client: TasksExtClient, name: string, args: Record<string, unknown>): Promise<string> {
  const answer = await client.call('tools/call', { name, arguments: args });
  if (typeof answer.taskId !== 'string') throw new Error(`${name} made no task: ${JSON.stringify(answer)}`);
  return answer.taskId;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, budgetMs = 120_000): Promise<T> {
  const deadline = performance.now() + budgetMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function terminal(client: TasksExtClient, taskId: string): Promise<Record<string, unknown>> {
  return until(`${taskId} terminal`, async () => {
    const got = await client.call('tasks/get', { taskId });
    return ['completed', 'failed', 'cancelled'].includes(String(got.status)) ? got : undefined;
  });
}

function bomb(how: string, label: string): Attack {
  return {
    id: `heap-${how}`,
    label,
    workers: true,
    linuxOnly: how === 'typed',
    async run(client) {
      const done = await terminal(client, await task(client, 'heap_bomb', { how }));
      // "the handler's worker process was ended: <why> (workers.heapMb, ...)": the why.
      const why = (typeof done.statusMessage === 'string' ? done.statusMessage : '')
        .replace(/^the handler's worker process was ended: /, '')
        .replace(/ \(workers\..*$/, '');
      return `${String(done.status)}: ${why}`;
    },
  };
}

function flood(workers: boolean): Attack {
  return {
    id: workers ? 'log-flood' : 'log-flood-inline',
    label: `un-awaited ctx.log flood, ${workers ? 'in a worker' : 'on the serving thread'}`,
    workers,
    async run(client, quick) {
      const lines = quick ? 20_000 : 200_000;
      const id = await task(client, 'log_flood', { lines });
      const done = await terminal(client, id);
      const log = await client.call('terminus/tasks/logs', { taskId: id, after: 0, limit: 1 });
      return `${String(done.status)}: ${String(log.dropped)} of ${lines} lines dropped, last seq ${lines}`;
    },
  };
}

const spinner: Attack = {
  id: 'spinner',
  label: 'a spinner that ignores its cancel (grace 2 s), then the next task',
  workers: true,
  async run(client) {
    const id = await task(client, 'spin', { seconds: 600 });
    // Both workers busy: the spinner and a second one, so the next task needs the freed slot.
    const other = await task(client, 'spin', { seconds: 600 });
    await sleep(500);
    await client.call('tasks/cancel', { taskId: id });
    const cancelledAt = performance.now();
    const next = await terminal(client, await task(client, 'nap', { ms: 0 }));
    const freedMs = Math.round(performance.now() - cancelledAt);
    await client.call('tasks/cancel', { taskId: other });
    return `cancelled; the next task ${String(next.status)} ${freedMs} ms after the cancel`;
  },
};

export const ATTACKS: readonly Attack[] = [
  bomb('big', `heap bomb: 64 MB arrays (--worker-heap-mb ${HEAP_MB})`),
  bomb('json', `heap bomb: 32 MB JSON.parse arrays (--worker-heap-mb ${HEAP_MB})`),
  bomb('typed', `memory bomb: 64 MB Float64Arrays (--worker-memory-mb ${2 * HEAP_MB})`),
  spinner,
  flood(true),
  flood(false),
];

/** Resident memory of `pid`, and of its child processes, in MB (Linux `/proc`). */
function resident(pid: number): { server: number; workers: number } {
  const rss = (p: number): number => {
    try {
      const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      return kb === null ? 0 : Number(kb[1]) / 1024;
    } catch {
      return 0;
    }
  };
  let workers = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) workers += rss(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return { server: rss(pid), workers };
}

interface Phase {
  readonly get: number[];
  readonly call: number[];
}

/** The other caller: `tasks/get` of its own task, then `echo`, 5 ms apart, until `stop`. */
async function caller(client: TasksExtClient, mine: string, stop: AbortSignal, max = Infinity): Promise<Phase> {
  const phase: Phase = { get: [], call: [] };
  while (!stop.aborted && phase.get.length < max) {
    let start = performance.now();
    await client.call('tasks/get', { taskId: mine });
    phase.get.push(performance.now() - start);
    start = performance.now();
    await client.call('tools/call', { name: 'echo', arguments: { text: 'ping' } });
    phase.call.push(performance.now() - start);
    await sleep(5);
  }
  return phase;
}

async function serve(attack: Attack, db: string[]): Promise<{ child: ChildProcess; url: string }> {
  const workers = attack.workers
    ? ['--workers', '2', '--worker-heap-mb', String(HEAP_MB), '--worker-memory-mb', String(2 * HEAP_MB)]
    : [];
  const args = [CLI, 'serve', '--port', '0', '--fixtures', 'hostile', '--abort-grace-ms', '2000'];
  args.push('--polls-per-minute', '0', '--creates-per-minute', '0', ...db, ...workers);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`terminus serve exited ${code}: ${stderr}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /listening on (\S+)/.exec(line);
      if (match !== null) resolve(match[1]!);
    });
  });
  if (attack.workers)
    await until('workers ready', async () => (/handler workers ready/.test(stderr) ? true : undefined));
  return { child, url };
}

export interface AttackResult {
  readonly attack: string;
  readonly label: string;
  readonly outcome: string;
  readonly idle: Phase;
  readonly under: Phase;
  readonly rssMb: {
    readonly before: number;
    readonly peak: number;
    readonly after: number;
    readonly workersPeak: number;
  };
  /** The server still answered after the attack (a last `tasks/get`). */
  readonly alive: boolean;
}

export interface AttackOptions {
  readonly rounds: number;
  readonly db: 'sqlite' | 'postgres';
  /** Fewer reads and a smaller flood: the smoke test's run. */
  readonly quick: boolean;
  readonly only?: readonly string[];
  readonly log: (line: string) => void;
}

async function once(attack: Attack, options: AttackOptions): Promise<AttackResult> {
  const dir = mkdtempSync(join(tmpdir(), 'terminus-attacks-'));
  let schema: string | undefined;
  const pgUrl = process.env.TERMINUS_TEST_PG_URL ?? '';
  if (options.db === 'postgres') schema = `attacks_${randomBytes(5).toString('hex')}`;
  const db = schema === undefined ? ['--db', join(dir, 'tasks.db')] : ['--db', pgUrl, '--pg-schema', schema];
  const { child, url } = await serve(attack, db);
  const pid = child.pid!;
  try {
    const client = tasksExtClient(url);
    const mine = await task(client, 'nap', { ms: 0 });
    await terminal(client, mine);
    const reads = options.quick ? 20 : 200;
    const idle = await caller(client, mine, new AbortController().signal, reads);
    const before = resident(pid);
    let peak = before.server;
    let workersPeak = before.workers;
    const stop = new AbortController();
    const sampling = (async () => {
      while (!stop.signal.aborted) {
        const now = resident(pid);
        peak = Math.max(peak, now.server);
        workersPeak = Math.max(workersPeak, now.workers);
        await sleep(100);
      }
    })();
    const measuring = caller(client, mine, stop.signal);
    let outcome: string;
    try {
      outcome = await attack.run(client, options.quick);
    } finally {
      stop.abort();
    }
    const under = await measuring;
    await sampling;
    await sleep(1000);
    const after = resident(pid).server;
    const alive = (await client.call('tasks/get', { taskId: mine })).status === 'completed';
    return {
      attack: attack.id,
      label: attack.label,
      outcome,
      idle,
      under,
      rssMb: { before: before.server, peak, after, workersPeak },
      alive,
    };
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
    if (schema !== undefined) {
      const admin = new pg.Client({ connectionString: pgUrl });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }
}

/** Every attack `rounds` times, in turn. */
export async function runAttacks(options: AttackOptions): Promise<AttackResult[][]> {
  const attacks = ATTACKS.filter(
    (a) =>
      (options.only === undefined || options.only.includes(a.id)) && (!a.linuxOnly || process.platform === 'linux'),
  );
  const results: AttackResult[][] = attacks.map(() => []);
  for (let round = 0; round < options.rounds; round += 1) {
    for (const [i, attack] of attacks.entries()) {
      options.log(`round ${round + 1}/${options.rounds}: ${attack.id} (load average ${loadavg()[0]!.toFixed(1)})`);
      results[i]!.push(await once(attack, options));
    }
  }
  return results;
}

const f = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(x >= 10 ? 1 : 2));

/** The table: one row per attack, medians over rounds. */
export function renderAttacks(results: readonly AttackResult[][], db: string): string {
  const lines = [
    `Another caller during each attack (${db}; medians over ${results[0]?.length ?? 0} rounds; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})`,
    '',
    '| attack | tasks/get p50 / p99 (ms) idle → attack | p99 ratio | echo call p50 / p99 (ms) idle → attack | p99 ratio | server RSS MB before / peak / after | workers RSS MB peak | what became of it |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const rounds of results) {
    const first = rounds[0];
    if (first === undefined) continue;
    const med = (pick: (r: AttackResult) => number): number => summarize(rounds.map(pick)).median;
    const p = (phase: 'idle' | 'under', kind: 'get' | 'call', q: number) => med((r) => percentile(r[phase][kind], q));
    const ratio = (kind: 'get' | 'call') => med((r) => percentile(r.under[kind], 99) / percentile(r.idle[kind], 99));
    lines.push(
      `| ${first.label} | ${f(p('idle', 'get', 50))} / ${f(p('idle', 'get', 99))} → ${f(p('under', 'get', 50))} / ${f(p('under', 'get', 99))} | ${ratio('get').toFixed(2)}x | ${f(p('idle', 'call', 50))} / ${f(p('idle', 'call', 99))} → ${f(p('under', 'call', 50))} / ${f(p('under', 'call', 99))} | ${ratio('call').toFixed(2)}x | ${f(med((r) => r.rssMb.before))} / ${f(med((r) => r.rssMb.peak))} / ${f(med((r) => r.rssMb.after))} | ${f(med((r) => r.rssMb.workersPeak))} | ${rounds.at(-1)?.outcome ?? ''}${rounds.every((r) => r.alive) ? '' : ' (server did not answer after it)'} |`,
    );
  }
  return lines.join('\n');
}

function flag(argv: readonly string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at === -1 ? undefined : argv[at + 1];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const argv = process.argv.slice(2);
  const quick = argv.includes('--quick');
  const db = flag(argv, '--db') === 'postgres' ? 'postgres' : 'sqlite';
  if (db === 'postgres' && (process.env.TERMINUS_TEST_PG_URL ?? '') === '') {
    process.stderr.write('bench/attacks: --db postgres needs TERMINUS_TEST_PG_URL\n');
    process.exit(2);
  }
  const only = flag(argv, '--only')?.split(',');
  const rounds = Number(flag(argv, '--rounds') ?? (quick ? 1 : 3));
  const results = await runAttacks({
    rounds,
    db,
    quick,
    ...(only === undefined ? {} : { only }),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${renderAttacks(results, db)}\n`);
}
