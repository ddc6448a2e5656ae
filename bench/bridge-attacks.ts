/**
 * `npx tsx bench/bridge-attacks.ts [--rounds 3] [--seconds 10] [--json]`: does `terminus bridge` keep
 * answering other callers while one caller attacks it through its upstreams? The built bridge
 * (`npm run build` first) serves HTTP on 127.0.0.1 in front of four upstreams: a plain SDK server
 * (the observer's fast tool), server-everything (a 10 s synchronous tool), an SDK server in this
 * process that can stop answering, and a hostile server whose answers are malformed. An observer
 * host measures its `tools/list` and a fast `tools/call` (`plain__add`), each in a loop of its own,
 * while
 * an attacker host, in turn: does nothing (idle); keeps listing and calling the upstream that stopped
 * answering (hanging upstream); re-calls the 10 s synchronous tool from 8 loops, each giving up after
 * 3 s as a host with a short timeout would (retry storm); calls the hostile tool in every mode
 * (malformed answers). Phases are interleaved per round; each phase's p50 and p99 are divided by
 * idle's of the same round, and the medians over rounds are printed with the load average.
 * Timings are this machine's; the smoke test (test/bench/bridge-attacks-smoke.test.ts) checks the
 * structure only.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { BUILT, EVERYTHING, ROOT, stdioCommand } from '../test/cli/helpers.js';
import { startSwitchableServer, type SwitchableServer } from '../test/bridge/fixtures/switchable-server.js';

export const PHASES = ['idle', 'hanging upstream', 'retry storm', 'malformed answers'] as const;
export type Phase = (typeof PHASES)[number];

export interface AttackOptions {
  readonly rounds: number;
  /** How long each phase is measured (s). */
  readonly seconds: number;
}

export interface Percentiles {
  readonly p50: number;
  readonly p99: number;
  readonly samples: number;
}

export interface PhaseRow {
  readonly phase: Phase;
  /** Medians over rounds of each round's percentiles (ms). */
  readonly list: Percentiles;
  readonly call: Percentiles;
  /** Medians over rounds of (this phase's percentile / idle's of the same round). */
  readonly ratio: {
    readonly listP50: number;
    readonly listP99: number;
    readonly callP50: number;
    readonly callP99: number;
  };
  /** Requests the attacker made during the phase, summed over rounds. */
  readonly attacks: number;
  /** Observer requests that failed (never expected), summed over rounds. */
  readonly failures: number;
}

export interface AttackReport {
  readonly rounds: number;
  readonly seconds: number;
  readonly load: { readonly start: number; readonly end: number };
  readonly rows: readonly PhaseRow[];
}

const FIXTURES = join(ROOT, 'test/bridge/fixtures');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), samples: sorted.length };
}

const median = (values: readonly number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

/** The built bridge on HTTP (port 0) with the four upstreams; resolves with its URL. */
async function startBridge(dir: string, flaky: SwitchableServer): Promise<{ url: string; stop(): Promise<void> }> {
  const upstreams = [
    `plain=stdio:${stdioCommand(join(FIXTURES, 'plain-server.ts'))}`,
    `everything=stdio:'${process.execPath}' '${EVERYTHING}' stdio`,
    `flaky=${flaky.url}`,
    `evil=stdio:${stdioCommand(join(FIXTURES, 'hostile-server.ts'))}`,
  ];
  const child = spawn(
    process.execPath,
    [
      BUILT,
      'bridge',
      ...upstreams.flatMap((u) => ['--upstream', u]),
      '--ledger',
      join(dir, 'bridge.db'),
      '--inline-wait',
      '2',
      '--port',
      '0',
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`terminus bridge exited ${String(code)} before listening`)));
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function host(url: string, name: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** The attacker's loops for one phase; they run until `stop` aborts and count their requests. */
function attack(phase: Phase, attacker: Client, flaky: SwitchableServer, stop: AbortSignal): Promise<number> {
  let count = 0;
  const loop = async (step: (i: number) => Promise<unknown>): Promise<void> => {
    for (let i = 0; !stop.aborted; i++) {
      count += 1;
      await step(i).catch(() => undefined);
    }
  };
  const call = (name: string, args: Record<string, unknown>, timeout: number) =>
    attacker.callTool({ name, arguments: args }, { timeout });
  switch (phase) {
    case 'idle':
      return Promise.resolve(0);
    case 'hanging upstream':
      flaky.hang(true);
      return Promise.all([
        loop(() => attacker.listTools({}, { timeout: 20_000 })),
        loop((i) => call('flaky__echo', { text: `x${i}` }, 20_000)),
        loop((i) => call('flaky__echo', { text: `y${i}` }, 20_000)),
      ]).then(() => count);
    case 'retry storm':
      return Promise.all(
        Array.from({ length: 8 }, () =>
          loop(() => call('everything__trigger-long-running-operation', { duration: 10, steps: 1 }, 3_000)),
        ),
      ).then(() => count);
    case 'malformed answers': {
      const modes = ['traversal', 'contradiction', 'wrong-types', 'bad-result', 'huge'];
      // New operations at a host's pace (one call after another), each a new call (a new `n`).
      return loop((i) => call('evil__evil', { mode: modes[i % modes.length], n: i }, 5_000)).then(() => count);
    }
  }
}

/**
 * The observer: two loops side by side for `ms`, one listing tools, one calling the fast tool, each
 * request after the last; their latencies and failures.
 */
async function observe(observer: Client, ms: number): Promise<{ list: number[]; call: number[]; failures: number }> {
  const list: number[] = [];
  const call: number[] = [];
  let failures = 0;
  const end = performance.now() + ms;
  const loop = async (request: (i: number) => Promise<boolean>, into: number[]): Promise<void> => {
    for (let i = 0; performance.now() < end; i++) {
      const t0 = performance.now();
      try {
        if (!(await request(i))) failures += 1;
        into.push(performance.now() - t0);
      } catch {
        failures += 1;
      }
    }
  };
  await Promise.all([
    loop(async () => Array.isArray((await observer.listTools({}, { timeout: 60_000 })).tools), list),
    loop(async (i) => {
      const answer = await observer.callTool({ name: 'plain__add', arguments: { a: i, b: 1 } }, { timeout: 60_000 });
      return (answer.structuredContent as { sum?: number } | undefined)?.sum === i + 1;
    }, call),
  ]);
  return { list, call, failures };
}

/** Lists until the flaky upstream is back in the list (after a hanging phase). */
async function recovered(observer: Client): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const listed = await observer.listTools({}, { timeout: 60_000 });
    const missing = JSON.stringify(listed._meta ?? {});
    if (!missing.includes('"flaky"')) return;
    await sleep(200);
  }
}

export async function runBridgeAttacks(options: AttackOptions, log: (line: string) => void): Promise<AttackReport> {
  const loadStart = loadavg()[0] ?? Number.NaN;
  const dir = mkdtempSync(join(tmpdir(), 'terminus-bridge-attacks-'));
  const flaky = await startSwitchableServer();
  const bridge = await startBridge(dir, flaky);
  const observer = await host(bridge.url, 'observer');
  const attacker = await host(bridge.url, 'attacker');
  type Sample = { list: Percentiles; call: Percentiles; attacks: number; failures: number };
  const byPhase = new Map<Phase, Sample[]>(PHASES.map((p) => [p, []]));
  try {
    // Warm: every upstream started and listed once.
    await observer.listTools({}, { timeout: 60_000 });
    for (let round = 1; round <= options.rounds; round++) {
      for (const phase of PHASES) {
        log(`round ${round}/${options.rounds}: ${phase}`);
        const stop = new AbortController();
        const attacking = attack(phase, attacker, flaky, stop.signal);
        const seen = await observe(observer, options.seconds * 1000);
        stop.abort();
        if (phase === 'hanging upstream') flaky.hang(false);
        const attacks = await attacking;
        if (phase === 'hanging upstream') await recovered(observer);
        byPhase.get(phase)!.push({
          list: percentiles(seen.list),
          call: percentiles(seen.call),
          attacks,
          failures: seen.failures,
        });
      }
    }
  } finally {
    await Promise.allSettled([observer.close(), attacker.close()]);
    await bridge.stop();
    await flaky.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const idle = byPhase.get('idle')!;
  const rows = PHASES.map((phase): PhaseRow => {
    const samples = byPhase.get(phase)!;
    const ratio = (pick: (s: Sample) => number) => median(samples.map((s, i) => pick(s) / pick(idle[i]!)));
    const med = (pick: (s: Sample) => Percentiles): Percentiles => ({
      p50: median(samples.map((s) => pick(s).p50)),
      p99: median(samples.map((s) => pick(s).p99)),
      samples: samples.reduce((n, s) => n + pick(s).samples, 0),
    });
    return {
      phase,
      list: med((s) => s.list),
      call: med((s) => s.call),
      ratio: {
        listP50: ratio((s) => s.list.p50),
        listP99: ratio((s) => s.list.p99),
        callP50: ratio((s) => s.call.p50),
        callP99: ratio((s) => s.call.p99),
      },
      attacks: samples.reduce((n, s) => n + s.attacks, 0),
      failures: samples.reduce((n, s) => n + s.failures, 0),
    };
  });
  return {
    rounds: options.rounds,
    seconds: options.seconds,
    load: { start: loadStart, end: loadavg()[0] ?? Number.NaN },
    rows,
  };
}

export function renderAttacks(report: AttackReport): string {
  const ms = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
  const x = (v: number): string => `${v.toFixed(2)}x`;
  const lines = [
    `Another host's requests through \`terminus bridge\` during each attack: medians over ${report.rounds} round(s) of ${report.seconds} s per phase; load average ${report.load.start.toFixed(1)} at the start, ${report.load.end.toFixed(1)} at the end.`,
    '',
    '| phase | tools/list p50 / p99 (ms) | vs idle | fast call p50 / p99 (ms) | vs idle | attacker requests | observer failures |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...report.rows.map(
      (r) =>
        `| ${r.phase} | ${ms(r.list.p50)} / ${ms(r.list.p99)} | ${x(r.ratio.listP50)} / ${x(r.ratio.listP99)} | ` +
        `${ms(r.call.p50)} / ${ms(r.call.p99)} | ${x(r.ratio.callP50)} / ${x(r.ratio.callP99)} | ${r.attacks} | ${r.failures} |`,
    ),
  ];
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '10' },
      json: { type: 'boolean', default: false },
    },
  });
  const report = await runBridgeAttacks(
    { rounds: Number(values.rounds), seconds: Number(values.seconds) },
    (line) => void process.stderr.write(`bridge-attacks: ${line}\n`),
  );
  process.stdout.write(`${values.json ? JSON.stringify(report, null, 2) : renderAttacks(report)}\n`);
}
