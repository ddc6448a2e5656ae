/**
 * `npx tsx bench/handler-threads.ts [rounds] [samples]` (after `npm run build`): another caller's
 * `tasks/get` latency while 16 CPU-bound handlers are in flight, with the handlers on the serving
 * thread (`terminus serve`), in worker threads (`terminus serve --workers 2`) and in reniced worker
 * threads (`--workers-nice 10`), same run, rounds interleaved (A B C A B C ...). Each round starts a fresh server (the built CLI, a fresh SQLite file),
 * creates the caller's own task and lets it finish, measures `samples` sequential `tasks/get` of it
 * idle (p50, p99), then submits 16 `build_report` tasks (hash chains, 20 ms slices) and measures
 * again. Printed: every round, the medians over rounds, loaded p99 / idle p99, and the load average
 * at start and end, since absolute times on a shared machine mean little.
 *
 * With `--workers 2` a node runs one task per thread: 2 of the 16 run at a time, 14 wait claimed
 * by nobody; on the serving thread all 16 run at once (concurrency 16). That is the design (a
 * thread's crash takes only its own task), so it is what this measures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { percentile, summarize } from './lib/stats.js';
import { ROOT } from './lib/root.js';

const ROUNDS = Number(process.argv[2] ?? 5);
const SAMPLES = Number(process.argv[3] ?? 400);
const LOAD_TASKS = 16;
const PROTOCOL = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';

interface Variant {
  readonly name: string;
  readonly flags: readonly string[];
}

const VARIANTS: readonly Variant[] = [
  { name: 'handlers on the serving thread', flags: [] },
  { name: 'handlers in 2 worker threads (--workers 2)', flags: ['--workers', '2'] },
  { name: 'the same, threads reniced (--workers-nice 10)', flags: ['--workers', '2', '--workers-nice', '10'] },
];

let nextId = 1;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
async function call(url: string, method: string, params: Record<string, unknown>): Promise<any> {
  const id = nextId++;
  const body = {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': PROTOCOL,
        'io.modelcontextprotocol/clientInfo': { name: 'terminus-bench', version: '0.1.0' },
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } },
      },
    },
  };
  const name = method === 'tools/call' ? params['name'] : params['taskId'];
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? 'null');
  const message = JSON.parse(json) as { result?: unknown; error?: { message: string } };
  if (message.error !== undefined) throw new Error(`${method}: ${message.error.message}`);
  return message.result;
}

async function startServer(db: string, flags: readonly string[]): Promise<{ child: ChildProcess; url: string }> {
  const args = [join(ROOT, 'dist/cli/main.js'), 'serve', '--port', '0', '--db', db];
  // One principal drives everything: no per-caller limits in the way of the figure.
  args.push('--polls-per-minute', '0', '--creates-per-minute', '0', ...flags);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`terminus serve exited ${code}`)));
  });
  const url = /listening on (\S+)/.exec(line)?.[1];
  if (url === undefined) throw new Error(`no URL in ${line}`);
  return { child, url };
}

/** Bounded in count and time: a loaded serving thread may answer a read only every half second. */
const PHASE_MS = 40_000;

async function sampleGets(url: string, taskId: string): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + PHASE_MS;
  for (let i = 0; i < SAMPLES && performance.now() < end; i++) {
    const start = performance.now();
    await call(url, 'tasks/get', { taskId });
    times.push(performance.now() - start);
    // A polling client, not a flood: 5 ms between reads.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return times;
}

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Percentiles {
  readonly p50: number;
  readonly p99: number;
  /** Reads in the sample (fewer than asked when the phase's time bound came first). */
  readonly n: number;
}

interface RoundResult {
  readonly idle: Percentiles;
  readonly loaded: Percentiles;
}

async function round(dir: string, variant: Variant, n: number): Promise<RoundResult> {
  const { child, url } = await startServer(join(dir, `${n}-${variant.flags.length}.db`), variant.flags);
  try {
    const tasksFor = (args: Record<string, unknown>) =>
      call(url, 'tools/call', { name: 'build_report', arguments: args }) as Promise<{ taskId: string }>;
    const mine = await tasksFor({ sections: 1, sectionSeconds: 0 });
    await until('the caller’s own task', async () => {
      const got = (await call(url, 'tasks/get', { taskId: mine.taskId })) as { status: string };
      return got.status === 'completed';
    });
    const idle = await sampleGets(url, mine.taskId);
    const load = await Promise.all(
      Array.from({ length: LOAD_TASKS }, () => tasksFor({ sections: 1, sectionSeconds: 600 })),
    );
    // Every handler that can run has started (progress 0 of 1 is its first write).
    await until('the handlers started', async () => {
      const started = await Promise.all(
        load.map(async ({ taskId }) => {
          const got = (await call(url, 'tasks/get', { taskId })) as { statusMessage?: string };
          return got.statusMessage?.startsWith('section 1') === true;
        }),
      );
      return started.filter(Boolean).length >= (variant.flags.length === 0 ? LOAD_TASKS : 2);
    });
    const loaded = await sampleGets(url, mine.taskId);
    const p = (xs: number[]): Percentiles => ({ p50: percentile(xs, 50), p99: percentile(xs, 99), n: xs.length });
    return { idle: p(idle), loaded: p(loaded) };
  } finally {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

const fixed = (x: number): string => x.toFixed(2);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'handler-threads-'));
  const loadStart = loadavg();
  const results = new Map<string, RoundResult[]>(VARIANTS.map((v) => [v.name, []]));
  try {
    for (let n = 0; n < ROUNDS; n++) {
      for (const variant of VARIANTS) {
        const result = await round(dir, variant, n);
        results.get(variant.name)!.push(result);
        process.stderr.write(
          `round ${n + 1} ${variant.name}: idle p50 ${fixed(result.idle.p50)} p99 ${fixed(result.idle.p99)} ms ` +
            `(n ${result.idle.n}); loaded p50 ${fixed(result.loaded.p50)} p99 ${fixed(result.loaded.p99)} ms ` +
            `(n ${result.loaded.n}); load ${fixed(loadavg()[0] ?? NaN)}\n`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const loadEnd = loadavg();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `tasks/get of another caller's task, up to ${SAMPLES} sequential reads 5 ms apart (at most ${PHASE_MS / 1000} s), ` +
      `idle and with ${LOAD_TASKS} build_report tasks in flight`,
  );
  out(
    `medians over ${ROUNDS} rounds (min-max), ms; load average 1/5/15 min: start ${loadStart.map(fixed).join(' ')}, end ${loadEnd.map(fixed).join(' ')}`,
  );
  out('');
  out('| handlers | idle p50 | idle p99 | loaded p50 | loaded p99 | loaded p99 / idle p99 | loaded reads per round |');
  out('| --- | --- | --- | --- | --- | --- | --- |');
  for (const [name, rounds] of results) {
    const s = (pick: (r: RoundResult) => number) => {
      const { median, min, max } = summarize(rounds.map(pick));
      return `${fixed(median)} (${fixed(min)}-${fixed(max)})`;
    };
    const ratio = summarize(rounds.map((r) => r.loaded.p99 / r.idle.p99));
    out(
      `| ${name} | ${s((r) => r.idle.p50)} | ${s((r) => r.idle.p99)} | ${s((r) => r.loaded.p50)} | ` +
        `${s((r) => r.loaded.p99)} | ${fixed(ratio.median)}x (${fixed(ratio.min)}-${fixed(ratio.max)}) | ` +
        `${summarize(rounds.map((r) => r.loaded.n)).median} |`,
    );
  }
}

await main();
