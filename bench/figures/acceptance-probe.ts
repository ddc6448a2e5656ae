/**
 * Figure 3, one task at a time, end to end with timestamps: where the time between the server's
 * terminal commit and the executor's receipt goes. Starts the bench server (SQLite) on loopback
 * HTTP and our executor (SQLite ledger, listening), runs `--tasks` calls of `--ms` one after the
 * other, and prints for each the instants, relative to the commit, of: the push's frame on the
 * listen stream, the hint handed to the executor, each `tasks/get` sent and answered, each ledger
 * step begun and committed (with its state), and `result()` resolved.
 *
 *   npx tsx bench/figures/acceptance-probe.ts [--tasks 5] [--ms 50] [--poll-ms 250] [--no-listen]
 *        [--width 1] [--ledger file|memory]
 *
 * With `--width N` (N > 1, as figure 3's 4 in flight) it prints no timeline but the p50 of commit ->
 * receipt and how long the ledger held the event loop (better-sqlite3 commits synchronously, fsync
 * included), as a share of the run's wall time; `--ledger memory` takes the disk out of the path.
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import type { Ledger } from '../../src/executor/ledger-port.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import type { ClientWire } from '../../src/executor/wire-port.js';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { BENCH_HEADERS, startServer } from '../lib/proc.js';
import { wallMs } from '../lib/stats.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '5' },
    ms: { type: 'string', default: '50' },
    'poll-ms': { type: 'string', default: '250' },
    'no-listen': { type: 'boolean', default: false },
    width: { type: 'string', default: '1' },
    ledger: { type: 'string', default: 'file' },
  },
});
const listen = values['no-listen'] !== true;

interface Mark {
  readonly t: number;
  readonly what: string;
}
const marks: Mark[] = [];
const mark = (what: string): void => void marks.push({ t: wallMs(), what });

/** The fetch the connection uses, timing every request, and every chunk of a push stream. */
const timedFetch: typeof fetch = async (input, init) => {
  const body = typeof init?.body === 'string' ? init.body : '';
  const method = /"method":"([^"]+)"/.exec(body)?.[1] ?? init?.method ?? 'GET';
  mark(`http ${method} sent`);
  const response = await fetch(input, init);
  mark(`http ${method} answered ${response.status}`);
  if (method !== 'subscriptions/listen' || response.body === null) return response;
  const reader = response.body.getReader();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      const text = new TextDecoder().decode(value);
      for (const frame of text.split('\n\n')) {
        const status = /"status":"([^"]+)"/.exec(frame)?.[1];
        if (status !== undefined) mark(`push frame ${status} ${/"taskId":"([^"]+)"/.exec(frame)?.[1] ?? '?'}`);
      }
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(stream, { status: response.status, headers: response.headers });
};

function timedLedger(ledger: Ledger): Ledger {
  return new Proxy(ledger, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if ((key !== 'apply' && key !== 'acceptTerminal') || typeof value !== 'function') return value;
      return async (step: { record: { state: string } }) => {
        mark(`ledger ${String(key)} ${step.record.state} begun`);
        const answer = await (value as (s: unknown) => Promise<unknown>).call(target, step);
        mark(`ledger ${String(key)} ${step.record.state} committed`);
        return answer;
      };
    },
  });
}

function timedWire(wire: ClientWire): ClientWire {
  return new Proxy(wire, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (key === 'onStatusHint') {
        return (listener: (taskId: string, status: unknown) => void) =>
          (value as (l: typeof listener) => () => void).call(target, (taskId, status) => {
            mark(`hint ${String(status)}`);
            listener(taskId, status);
          });
      }
      if (key !== 'getStatus' && key !== 'fetchResult') return (value as (...a: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        mark(`wire ${String(key)} called`);
        const answer = (await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as {
          status?: string;
        };
        mark(`wire ${String(key)} answered ${answer.status ?? ''}`);
        return answer;
      };
    },
  });
}

const dir = mkdtempSync(join(tmpdir(), 'terminus-probe-'));
const commitLog = join(dir, 'commits.jsonl');
const server = await startServer(
  {
    entry: 'bench/servers/terminus.ts',
    args: ['--poll-ms', values['poll-ms'], '--commit-log', commitLog, '--db', join(dir, 'server.db')],
  },
  'http',
);
const ledger = timedLedger(
  openSqliteLedger({ path: values.ledger === 'memory' ? ':memory:' : join(dir, 'ledger.db') }),
);
const width = Number(values.width);
const executor = await createExecutor({
  ledger,
  connect: async () =>
    timedWire(
      await connectServer(
        { url: server.url!, headers: BENCH_HEADERS, fetch: timedFetch },
        { clock: systemClock, listen },
      ),
    ),
  clock: systemClock,
  random: systemRandom,
  ids: systemIds,
  qps: 10_000,
});
const out: string[] = [];
try {
  if (width > 1) {
    const accepted = new Map<string, number>();
    let next = 0;
    const started = wallMs();
    await Promise.all(
      Array.from({ length: width }, async () => {
        while (next < Number(values.tasks)) {
          const i = next++;
          const handle = await executor.submit({
            callNodeId: `probe-${i}`,
            server: 'bench',
            tool: 'bench_sleep',
            args: { ms: Number(values.ms) },
          });
          const receipt = await handle.result();
          accepted.set(receipt.taskId, wallMs());
        }
      }),
    );
    const wall = wallMs() - started;
    const commits = new Map(
      readFileSync(commitLog, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: string; t: number })
        .map((c) => [c.id, c.t] as const),
    );
    const latencies = [...accepted].map(([id, t]) => t - (commits.get(id) ?? t)).sort((a, b) => a - b);
    let busy = 0;
    const open = new Map<string, number>();
    for (const m of marks) {
      const key = m.what.replace(/ (begun|committed)$/, '');
      if (m.what.endsWith('begun')) open.set(key, m.t);
      else if (m.what.endsWith('committed')) busy += m.t - (open.get(key) ?? m.t);
    }
    const pushed = new Map<string, number>();
    for (const m of marks) {
      const hit = /^push frame completed (\S+)$/.exec(m.what);
      if (hit !== null && !pushed.has(hit[1]!)) pushed.set(hit[1]!, m.t);
    }
    const toPush = [...accepted.keys()]
      .flatMap((id) => (pushed.has(id) && commits.has(id) ? [pushed.get(id)! - commits.get(id)!] : []))
      .sort((a, b) => a - b);
    const streams = marks.filter((m) => m.what === 'http subscriptions/listen sent').length;
    out.push(
      `commit -> completed push p50 ${toPush[Math.floor(toPush.length / 2)]?.toFixed(1)} ms (${toPush.length} pushed), ` +
        `${streams} listen streams opened`,
    );
    out.push(
      `${accepted.size} tasks, ${width} in flight, ledger ${values.ledger}, load ${loadavg()[0]?.toFixed(2)}: ` +
        `commit -> receipt p50 ${latencies[Math.floor(latencies.length / 2)]?.toFixed(1)} ms; ` +
        `ledger held the loop ${busy.toFixed(0)} ms of ${wall.toFixed(0)} ms (${((100 * busy) / wall).toFixed(0)} %)`,
    );
  }
  for (let i = 0; i < (width > 1 ? 0 : Number(values.tasks)); i += 1) {
    marks.length = 0;
    const handle = await executor.submit({
      callNodeId: `probe-${i}`,
      server: 'bench',
      tool: 'bench_sleep',
      args: { ms: Number(values.ms) },
    });
    const receipt = await handle.result();
    mark('result() resolved');
    const commits = readFileSync(commitLog, 'utf8').trim().split('\n');
    const commit = commits
      .map((line) => JSON.parse(line) as { id: string; t: number })
      .find((c) => c.id === receipt.taskId);
    if (commit === undefined) throw new Error(`no commit logged for ${receipt.taskId}`);
    out.push(`task ${i + 1} (${receipt.taskId}), load ${loadavg()[0]?.toFixed(2)}:`);
    for (const m of marks) {
      const dt = m.t - commit.t;
      if (dt < -5) continue;
      out.push(`  ${dt >= 0 ? '+' : ''}${dt.toFixed(2).padStart(8)} ms  ${m.what}`);
    }
  }
} finally {
  await executor.close();
  await ledger.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${out.join('\n')}\n`);
