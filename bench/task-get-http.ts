/**
 * `npx tsx bench/task-get-http.ts [--rounds 5] [--gets 1000] [--burst 4000] [--profile DIR]`:
 * `tasks/get` over loopback HTTP at 1 client (p50 of sequential calls) and 16 clients (requests
 * per second), issue 14 item 1. Four servers, rounds interleaved (A B C D A B C D ...):
 *
 * - ours with the task-method fast path (`bench/servers/terminus.ts`, SQLite, the 2026-07-28 Tasks
 *   extension: one stateless POST per call);
 * - ours with every request through the SDK (`--no-fast-path`), same wire;
 * - B0, SDK 1.32 with its InMemoryTaskStore (2025-11-25, one session per client: its only wire);
 * - the floor (node:http + better-sqlite3, 2025-11-25 subset).
 *
 * Every client is a `fetch` on the same machine, so the client's CPU competes with the server's
 * on 2 cores; the ratios, not the absolute times, are the figure. The load average is printed at
 * the start and the end. `--profile DIR` then runs ours (fast path) once more under
 * `node --cpu-prof` for a 16-client burst and prints where its CPU time went.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { RpcClient } from './client/rpc.js';
import { pool, submitTask } from './client/tasks.js';
import { prepareEntries } from './lib/entries.js';
import { BENCH_HEADERS, withServer, type RunningServer, type ServerSpec } from './lib/proc.js';
import { percentile } from './lib/stats.js';
import { openBenchEnv } from './lib/variants.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    gets: { type: 'string', default: '1000' },
    burst: { type: 'string', default: '4000' },
    profile: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const GETS = Number(values.gets);
const BURST = Number(values.burst);
const CLIENTS = 16;
const WARMUP = 200;
const PROTOCOL = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';

type VariantId = 'fast' | 'sdk' | 'B0' | 'floor';
const LABELS: Record<VariantId, string> = {
  fast: 'ours, fast path (2026-07-28 Tasks ext)',
  sdk: 'ours, through the SDK (same wire)',
  B0: 'B0 SDK 1.32 in-memory (2025-11-25)',
  floor: 'floor node:http + better-sqlite3',
};

/** Reads one task: resolves with its status. */
type Get = (taskId: string) => Promise<string>;

/** A 2026-07-28 Tasks-extension client of ours: one stateless POST per request. */
function modernClient(url: string): {
  call(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
} {
  let id = 0;
  return {
    async call(method, params) {
      id += 1;
      const name = method === 'tools/call' ? params.name : params.taskId;
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          ...BENCH_HEADERS,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': PROTOCOL,
          'mcp-method': method,
          ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
        },
        body: JSON.stringify({
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
        }),
      });
      const message = (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
      if (message.result === undefined) throw new Error(`${method} failed: ${JSON.stringify(message.error)}`);
      return message.result;
    },
  };
}

/** One reader per client lane, each on a task of its own (a 1 h sleep, so it stays `working`). */
async function readers(server: RunningServer, variant: VariantId): Promise<{ get: Get; taskId: string }[]> {
  if (variant === 'fast' || variant === 'sdk') {
    return Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        const client = modernClient(server.url!);
        const created = await client.call('tools/call', { name: 'bench_sleep', arguments: { ms: 3_600_000 } });
        if (created.resultType !== 'task') throw new Error(`no task: ${JSON.stringify(created)}`);
        const get: Get = async (taskId) => String((await client.call('tasks/get', { taskId })).status);
        return { get, taskId: created.taskId as string };
      }),
    );
  }
  const clients: RpcClient[] = await Promise.all(Array.from({ length: CLIENTS }, () => server.connect()));
  return Promise.all(
    clients.map(async (client) => {
      const { taskId } = await submitTask(client, 'bench_sleep', { ms: 3_600_000 });
      const get: Get = async (id) => String((await client.request('tasks/get', { taskId: id })).status);
      return { get, taskId };
    }),
  );
}

interface Sample {
  readonly p50Ms: number;
  readonly perSecond: number;
}

async function measure(server: RunningServer, variant: VariantId): Promise<Sample> {
  const lanes = await readers(server, variant);
  const first = lanes[0]!;
  for (let i = 0; i < WARMUP; i += 1) await first.get(first.taskId);
  const times: number[] = [];
  for (let i = 0; i < GETS; i += 1) {
    const start = performance.now();
    const status = await first.get(first.taskId);
    times.push(performance.now() - start);
    if (status !== 'working') throw new Error(`${variant}: task is ${status}`);
  }
  const start = performance.now();
  await pool(BURST, CLIENTS, async (_i, lane) => {
    const reader = lanes[lane % lanes.length]!;
    await reader.get(reader.taskId);
  });
  return { p50Ms: percentile(times, 50), perSecond: BURST / ((performance.now() - start) / 1000) };
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const fmt = (n: number, digits = 2): string => n.toLocaleString('en-US', { maximumFractionDigits: digits });

async function main(): Promise<void> {
  const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  const loadStart = loadavg();
  await prepareEntries(log);
  const env = await openBenchEnv({ noPostgres: true, log });
  const specOf = (variant: VariantId, nodeFlags: readonly string[] = []): ServerSpec => {
    const base =
      variant === 'B0'
        ? env.spec('B0', { pollMs: 1000 })
        : env.spec(variant === 'floor' ? 'floor' : 'sqlite', { pollMs: 1000, db: env.freshDb('sqlite', variant) });
    return { ...base, args: [...base.args, ...(variant === 'sdk' ? ['--no-fast-path'] : [])], nodeFlags };
  };
  const samples = new Map<VariantId, Sample[]>();
  const order: VariantId[] = ['fast', 'sdk', 'B0', 'floor'];
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const variant of order) {
        log(`round ${round + 1}/${ROUNDS}: ${variant} (load ${fmt(loadavg()[0] ?? NaN)})`);
        const sample = await withServer(specOf(variant), 'http', (server) => measure(server, variant));
        samples.set(variant, [...(samples.get(variant) ?? []), sample]);
      }
    }
    const loadEnd = loadavg();
    const med = (v: VariantId, key: keyof Sample): number => median((samples.get(v) ?? []).map((s) => s[key]));
    const range = (v: VariantId, key: keyof Sample): string => {
      const xs = (samples.get(v) ?? []).map((s) => s[key]);
      return `${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))}`;
    };
    const out: string[] = [];
    out.push(
      `tasks/get over HTTP, ${ROUNDS} rounds interleaved, medians (range); ${GETS} sequential gets, ${BURST} at ${CLIENTS} clients`,
    );
    out.push(
      `load average at start ${loadStart.map((l) => fmt(l)).join(' / ')}, at end ${loadEnd.map((l) => fmt(l)).join(' / ')} (1/5/15 min)`,
    );
    out.push('');
    out.push('| server | p50, 1 client (ms) | req/s, 16 clients |');
    out.push('| --- | --- | --- |');
    for (const v of order) {
      out.push(
        `| ${LABELS[v]} | ${fmt(med(v, 'p50Ms'), 3)} (${range(v, 'p50Ms')}) | ${fmt(med(v, 'perSecond'), 0)} (${range(v, 'perSecond')}) |`,
      );
    }
    out.push('');
    const ratio = (a: VariantId, b: VariantId, key: keyof Sample): string => fmt(med(a, key) / med(b, key));
    out.push('| ratio | p50, 1 client | req/s, 16 clients |');
    out.push('| --- | --- | --- |');
    for (const [a, b] of [
      ['fast', 'sdk'],
      ['fast', 'B0'],
      ['fast', 'floor'],
      ['sdk', 'B0'],
      ['sdk', 'floor'],
    ] as const) {
      out.push(`| ${a} / ${b} | ${ratio(a, b, 'p50Ms')}x | ${ratio(a, b, 'perSecond')}x |`);
    }
    process.stdout.write(`${out.join('\n')}\n`);

    if (values.profile !== undefined) {
      for (const variant of ['fast', 'sdk'] as const) {
        const dir = join(values.profile, variant);
        log(`profiling ${variant} under --cpu-prof into ${dir}`);
        const spec = specOf(variant, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=200']);
        await withServer(spec, 'http', async (server) => {
          const lanes = await readers(server, variant);
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
        process.stdout.write(`\n${LABELS[variant]}: ${summarizeProfile(join(dir, file), BURST * 2)}\n`);
      }
    }
  } finally {
    await env.close();
  }
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

/** What a function's file says about who runs it. */
function categoryOf(url: string, name: string): string {
  if (name === '(garbage collector)') return 'GC';
  if (/^compile|^prepareExecution|^loadESM|^(import|require)Module/.test(name) || url.includes('internal/modules/')) {
    return 'startup';
  }
  if (url.includes('abort_controller') || name === 'DOMException') return 'AbortController / DOMException';
  if (name === '(idle)') return 'idle';
  if (name === '(program)') return '(program: native, not attributed)';
  if (url.includes('better-sqlite3')) return 'SQLite (better-sqlite3)';
  if (url.includes('@modelcontextprotocol')) return 'SDK';
  if (url.includes('/zod/')) return 'zod';
  if (url.includes('undici') || url.includes('internal/deps/undici') || url.includes('node:internal/webstreams')) {
    return 'web Request/Response (undici)';
  }
  if (url.includes('_http_') || url.includes('node:http') || url.includes('node:internal/http')) return 'node:http';
  if (url.includes('node:net') || url.includes('stream_base') || url.includes('node:internal/streams'))
    return 'sockets, streams';
  if (url.includes('terminus-bench') || url.includes('/src/')) return 'ours (bundled src/)';
  if (url === '') return 'native / builtins';
  return 'other node internals';
}

/** Self time by category and the top functions, from a V8 `.cpuprofile`, idle left out of the shares. */
function summarizeProfile(path: string, requests: number): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const categories = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const category = categoryOf(node.callFrame.url, node.callFrame.functionName);
    categories.set(category, (categories.get(category) ?? 0) + us);
    if (category === 'idle' || category === 'startup') continue;
    busy += us;
    const file = node.callFrame.url.split('/').slice(-2).join('/');
    const key = `${node.callFrame.functionName || '(anonymous)'} ${file}:${node.callFrame.lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const lines = [
    `CPU profile ${path}: ${fmt(busy / 1000, 0)} ms busy for ${requests} tasks/get at ${CLIENTS} clients, ` +
      `${fmt(busy / requests, 0)} us each (idle and startup left out)`,
    '',
    '| where | share of busy CPU |',
    '| --- | --- |',
  ];
  for (const [category, us] of [...categories].sort((a, b) => b[1] - a[1])) {
    if (category === 'idle' || category === 'startup') continue;
    lines.push(`| ${category} | ${fmt((100 * us) / busy, 1)} % |`);
  }
  lines.push('', '| top functions (self time) | share |', '| --- | --- |');
  for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
    lines.push(`| \`${name}\` | ${fmt((100 * us) / busy, 1)} % |`);
  }
  return lines.join('\n');
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
