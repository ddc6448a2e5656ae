/**
 * `npx tsx bench/identity-floods.ts [--rounds 3] [--gets 300] [--concurrency 16]`: does a flood by
 * one caller slow another caller down (issue 30)? A `terminus serve` (the built CLI, `npm run
 * build` first; SQLite, `--auth-tokens`, `--no-runner` so tasks stay `working`) takes, in each
 * round, three phases while bob reads his own task with `tasks/get` (2026-07-28) one request at a
 * time:
 *
 * - idle: nobody else;
 * - session flood: alice, another principal, sends 2025-11-25 `initialize` on `--concurrency`
 *   connections without pause (she holds her share of sessions, `--max-sessions-per-caller`, and is
 *   refused 429 after that); bob also opens a session of his own during it;
 * - page_token flood: alice sends `GET /v1/operations?page_token=<junk>` the same way (each is 400;
 *   an anonymous caller would be refused 401 before that on a server with `--auth-tokens`).
 *
 * The flood runs in its own process, so bob's client measures the server, not a shared event loop.
 * Printed: bob's p99 per phase (median over rounds) and its ratio to idle in the same round
 * (median over rounds), what the flood was answered, and the load average. Nothing is asserted
 * here: test/bench/identity-floods.test.ts checks the report's structure on a tiny run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ROOT } from './lib/root.js';
import { percentile, summarize, type Summary } from './lib/stats.js';

const ALICE = 'alice-flood-0123456789abcdef';
const BOB = 'bob-victim-0123456789abcdefg';
const PROTOCOL = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';

export type FloodKind = 'session' | 'page_token';

/** What one flood process was answered: HTTP status -> count. */
export type Answers = Record<string, number>;

export interface PhaseReport {
  readonly phase: 'idle' | FloodKind;
  /** bob's tasks/get p99 in each round, ms. */
  readonly p99Ms: readonly number[];
  /** p99 / the same round's idle p99. */
  readonly ratio: readonly number[];
  /** Answers to the flood, summed over rounds (empty for idle). */
  readonly answers: Answers;
}

export interface FloodReport {
  readonly rounds: number;
  readonly gets: number;
  readonly concurrency: number;
  readonly cores: number;
  readonly loadAverage: readonly number[];
  readonly phases: readonly PhaseReport[];
  /** bob's own `initialize` during each session flood: its HTTP status. */
  readonly bobSessionStatus: readonly number[];
}

export interface FloodOptions {
  readonly rounds: number;
  readonly gets: number;
  readonly concurrency: number;
  readonly log?: (line: string) => void;
}

export async function runIdentityFloods(options: FloodOptions): Promise<FloodReport> {
  const log = options.log ?? (() => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'terminus-floods-'));
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ [ALICE]: 'alice', [BOB]: 'bob' }));
  const server = await startServer(dir, tokens);
  try {
    const base = server.url.replace(/\/mcp$/, '');
    const taskId = await bobsTask(base);
    const phases: Record<PhaseReport['phase'], { p99Ms: number[]; ratio: number[]; answers: Answers }> = {
      idle: { p99Ms: [], ratio: [], answers: {} },
      session: { p99Ms: [], ratio: [], answers: {} },
      page_token: { p99Ms: [], ratio: [], answers: {} },
    };
    const bobSessionStatus: number[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      const idle = percentile(await bobReads(server.url, taskId, options.gets), 99);
      phases.idle.p99Ms.push(idle);
      phases.idle.ratio.push(1);
      for (const kind of ['session', 'page_token'] as const) {
        const flood = startFlood(kind, server.url, options.concurrency);
        await flood.started;
        const p99 = percentile(await bobReads(server.url, taskId, options.gets), 99);
        if (kind === 'session') bobSessionStatus.push(await initialize(server.url, BOB));
        const answers = await flood.stop();
        phases[kind].p99Ms.push(p99);
        phases[kind].ratio.push(p99 / idle);
        for (const [status, n] of Object.entries(answers)) {
          phases[kind].answers[status] = (phases[kind].answers[status] ?? 0) + n;
        }
        log(`round ${round}: ${kind} p99 ${p99.toFixed(2)} ms vs idle ${idle.toFixed(2)} ms`);
      }
    }
    return {
      rounds: options.rounds,
      gets: options.gets,
      concurrency: options.concurrency,
      cores: cpus().length,
      loadAverage: loadavg(),
      phases: (['idle', 'session', 'page_token'] as const).map((phase) => ({ phase, ...phases[phase] })),
      bobSessionStatus,
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The report as a table. */
export function renderFloods(report: FloodReport): string {
  const label = { idle: 'idle', session: 'session flood (alice)', page_token: 'page_token junk (alice)' };
  const fmt = (s: Summary): string => `${s.median.toFixed(2)} (${s.min.toFixed(2)}-${s.max.toFixed(2)})`;
  const lines = [
    `identity floods: ${report.rounds} round(s), ${report.gets} tasks/get by bob per phase, flood on ` +
      `${report.concurrency} connections; ${report.cores} cores, load average ${report.loadAverage.map((l) => l.toFixed(2)).join(' ')}`,
    '',
    '| phase | bob tasks/get p99, ms (median, range) | ratio vs idle (median, range) | the flood was answered |',
    '| --- | --- | --- | --- |',
    ...report.phases.map(
      (p) =>
        `| ${label[p.phase]} | ${fmt(summarize(p.p99Ms))} | ${fmt(summarize(p.ratio))} | ${
          Object.entries(p.answers)
            .map(([status, n]) => `${n} x ${status}`)
            .join(', ') || '-'
        } |`,
    ),
    '',
    `bob's own initialize during each session flood: ${report.bobSessionStatus.join(', ')}`,
  ];
  return `${lines.join('\n')}\n`;
}

interface Server {
  readonly url: string;
  stop(): Promise<void>;
}

async function startServer(dir: string, tokens: string): Promise<Server> {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'dist/cli/main.js'),
      'serve',
      '--port',
      '0',
      '--db',
      join(dir, 'floods.db'),
      '--auth-tokens',
      tokens,
      '--no-runner',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match !== null) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`terminus serve exited ${code}: ${stderr}`)));
  });
  return { url, stop: () => stopChild(child) };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function bobsTask(base: string): Promise<string> {
  const answer = await fetch(`${base}/v1/tools/build_report:run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${BOB}` },
    body: JSON.stringify({ arguments: { title: 'victim', sections: 1, sectionSeconds: 1 } }),
  });
  const operation = (await answer.json()) as { name?: string };
  if (typeof operation.name !== 'string') throw new Error(`bob's task was not created: ${JSON.stringify(operation)}`);
  return operation.name.replace('operations/', '');
}

/** bob's `tasks/get`, one at a time; the time of each, ms. */
async function bobReads(url: string, taskId: string, count: number): Promise<number[]> {
  const times: number[] = [];
  const body = (id: number) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tasks/get',
      params: {
        taskId,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': PROTOCOL,
          'io.modelcontextprotocol/clientInfo': { name: 'bob', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } },
        },
      },
    });
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const answer = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': PROTOCOL,
        'mcp-method': 'tasks/get',
        'mcp-name': taskId,
        authorization: `Bearer ${BOB}`,
      },
      body: body(i + 1),
    });
    const text = await answer.text();
    times.push(performance.now() - started);
    if (answer.status !== 200 || !text.includes('"status"'))
      throw new Error(`bob's tasks/get: ${answer.status} ${text}`);
  }
  return times;
}

/** A 2025-11-25 `initialize` (opens a session); its HTTP status. */
async function initialize(url: string, token: string): Promise<number> {
  const answer = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'flood', version: '1' } },
    }),
  });
  await answer.arrayBuffer();
  return answer.status;
}

/** A flood in a child process, until `stop`: resolves with what it was answered. */
function startFlood(
  kind: FloodKind,
  url: string,
  concurrency: number,
): { started: Promise<void>; stop(): Promise<Answers> } {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--flood',
      kind,
      '--url',
      url,
      '--concurrency',
      String(concurrency),
    ],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let out = '';
  const lines: ((line: string) => void)[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    let at = out.indexOf('\n');
    while (at !== -1) {
      const line = out.slice(0, at);
      out = out.slice(at + 1);
      lines.shift()?.(line);
      at = out.indexOf('\n');
    }
  });
  const next = (): Promise<string> => new Promise((resolve) => lines.push(resolve));
  const started = next().then(() => undefined);
  return {
    started,
    stop: async () => {
      const answers = next();
      child.stdin.end();
      return JSON.parse(await answers) as Answers;
    },
  };
}

/** The flood process: `concurrency` loops of one kind of request until stdin ends; prints the answers. */
async function flood(kind: FloodKind, url: string, concurrency: number): Promise<void> {
  const base = url.replace(/\/mcp$/, '');
  const answers: Answers = {};
  let running = true;
  process.stdin.on('end', () => (running = false));
  process.stdin.resume();
  const one = async (i: number): Promise<number> => {
    if (kind === 'session') return initialize(url, ALICE);
    const junk = Buffer.from(`junk-${i}-${Math.random()}`).toString('base64url');
    const answer = await fetch(`${base}/v1/operations?page_token=${junk}`, {
      headers: { authorization: `Bearer ${ALICE}` },
    });
    await answer.arrayBuffer();
    return answer.status;
  };
  let sent = 0;
  process.stdout.write('started\n');
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (running) {
        const status = String(await one(sent++).catch(() => 0));
        answers[status] = (answers[status] ?? 0) + 1;
      }
    }),
  );
  process.stdout.write(`${JSON.stringify(answers)}\n`);
}

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    gets: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '16' },
    flood: { type: 'string' },
    url: { type: 'string' },
  },
  strict: false,
});

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const main =
    values.flood !== undefined
      ? flood(values.flood as FloodKind, String(values.url), Number(values.concurrency))
      : runIdentityFloods({
          rounds: Number(values.rounds),
          gets: Number(values.gets),
          concurrency: Number(values.concurrency),
          log: (line) => void process.stderr.write(`bench: ${line}\n`),
        }).then((report) => void process.stdout.write(renderFloods(report)));
  main.then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(
        `identity floods failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
