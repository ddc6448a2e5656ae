/**
 * Figure 8 (issue 14): `tasks/get` of a working task, p50 of sequential calls at 1 client and
 * requests per second from 16 clients, over loopback HTTP and stdio. Every entry of
 * `TASK_GET_WORKLOAD` is one row pair: which server (ours on SQLite or PostgreSQL, B0, the floor on
 * either: on PostgreSQL it is the limit that binds ours, and the PostgreSQL targets name it),
 * which transport and wire, which extra server flags. A new row (another wire, a server flag) is
 * one more entry; the targets name the entries they compare.
 *
 * Per entry and round: a fresh server on a fresh database; 16 lanes, each with a task of its own
 * (a 1 h sleep, so every answer reads `working`); warm-up on lane 0, then `taskGets` sequential
 * reads (p50), then the 16 lanes at once: over HTTP, each lane's request sent by `wrk` for
 * `wrkSeconds` (`bench/lib/wrk.ts`; without wrk, and over stdio, `taskGetBurst` reads from the
 * harness's clients; rate = reads / wall time).
 * HTTP lanes: the Tasks extension (one stateless POST per call, ours only) or a 2025-11-25 session
 * each; stdio: the one connection, 16 reads in flight on it. The load runs on the other core than
 * the server (`bench/lib/pin.ts`); the ratios, not the absolute rates, are the figure.
 */
import type { RpcClient } from '../client/rpc.js';
import { pool, submitTask } from '../client/tasks.js';
import { tasksExtClient } from '../client/tasks-ext.js';
import { BENCH_TOKEN, withServer, type RunningServer, type ServerSpec, type Transport } from '../lib/proc.js';
import { fmt, ratioTarget, type Row, type Target } from '../lib/report.js';
import { percentile, summarize } from '../lib/stats.js';
import { wrkLoad } from '../lib/wrk.js';
import type { BenchEnv, VariantId } from '../lib/variants.js';
import type { FigureContext, FigureResult } from './context.js';

export type TaskGetWire = 'tasks-ext' | '2025-11-25';

export interface TaskGetEntry {
  readonly id: string;
  readonly label: string;
  /** The server of `BenchEnv.spec`. */
  readonly server: VariantId;
  readonly transport: Transport;
  readonly wire: TaskGetWire;
  /** Extra server flags (`--no-fast-path`). */
  readonly serverArgs?: readonly string[];
}

/** The rows of figure 8, in the order each round runs them. */
export const TASK_GET_WORKLOAD: readonly TaskGetEntry[] = [
  { id: 'http-fast', label: 'ours SQLite, fast path', server: 'sqlite', transport: 'http', wire: 'tasks-ext' },
  {
    id: 'http-sdk',
    label: 'ours SQLite, through the SDK (--no-fast-path)',
    server: 'sqlite',
    transport: 'http',
    wire: 'tasks-ext',
    serverArgs: ['--no-fast-path'],
  },
  { id: 'http-2025', label: 'ours SQLite, fast path', server: 'sqlite', transport: 'http', wire: '2025-11-25' },
  {
    id: 'http-2025-sdk',
    label: 'ours SQLite, through the SDK (--no-fast-path)',
    server: 'sqlite',
    transport: 'http',
    wire: '2025-11-25',
    serverArgs: ['--no-fast-path'],
  },
  { id: 'http-pg-fast', label: 'ours PostgreSQL, fast path', server: 'postgres', transport: 'http', wire: 'tasks-ext' },
  { id: 'http-B0', label: 'B0 SDK 1.32 in memory', server: 'B0', transport: 'http', wire: '2025-11-25' },
  { id: 'http-floor', label: 'floor', server: 'floor', transport: 'http', wire: '2025-11-25' },
  { id: 'http-floor-pg', label: 'floor on PostgreSQL', server: 'floor-pg', transport: 'http', wire: '2025-11-25' },
  { id: 'stdio-sqlite', label: 'ours SQLite, fast path', server: 'sqlite', transport: 'stdio', wire: '2025-11-25' },
  {
    id: 'stdio-sqlite-sdk',
    label: 'ours SQLite, through the SDK (--no-fast-path)',
    server: 'sqlite',
    transport: 'stdio',
    wire: '2025-11-25',
    serverArgs: ['--no-fast-path'],
  },
  { id: 'stdio-pg', label: 'ours PostgreSQL', server: 'postgres', transport: 'stdio', wire: '2025-11-25' },
  { id: 'stdio-B0', label: 'B0 SDK 1.32 in memory', server: 'B0', transport: 'stdio', wire: '2025-11-25' },
  { id: 'stdio-floor', label: 'floor', server: 'floor', transport: 'stdio', wire: '2025-11-25' },
  { id: 'stdio-floor-pg', label: 'floor on PostgreSQL', server: 'floor-pg', transport: 'stdio', wire: '2025-11-25' },
];

const CLIENTS = 16;
const WIRE_NAMES: Record<TaskGetWire, string> = {
  'tasks-ext': '2026-07-28 Tasks ext, stateless POSTs',
  '2025-11-25': '2025-11-25',
};

/** Reads one task: resolves with its status. */
type Get = (taskId: string) => Promise<string>;

export interface Lane {
  readonly get: Get;
  readonly taskId: string;
}

/** One lane per client, each on a task of its own (a 1 h sleep, so it stays `working`). */
export async function taskGetLanes(server: RunningServer, entry: TaskGetEntry, count = CLIENTS): Promise<Lane[]> {
  if (entry.wire === 'tasks-ext') {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const client = tasksExtClient(server.url!, BENCH_TOKEN);
        const created = await client.call('tools/call', { name: 'bench_sleep', arguments: { ms: 3_600_000 } });
        if (created.resultType !== 'task') throw new Error(`no task: ${JSON.stringify(created)}`);
        const get: Get = async (taskId) => String((await client.call('tasks/get', { taskId })).status);
        return { get, taskId: created.taskId as string };
      }),
    );
  }
  let clients: RpcClient[];
  if (server.transport === 'stdio') {
    const one = await server.connect();
    clients = Array.from({ length: count }, () => one);
  } else {
    clients = await Promise.all(Array.from({ length: count }, () => server.connect()));
  }
  return Promise.all(
    clients.map(async (client) => {
      const { taskId } = await submitTask(client, 'bench_sleep', { ms: 3_600_000 });
      const get: Get = async (id) => String((await client.request('tasks/get', { taskId: id })).status);
      return { get, taskId };
    }),
  );
}

export interface TaskGetSample {
  readonly p50Ms: number;
  readonly perSecond: number;
}

export interface TaskGetSizes {
  readonly warmup: number;
  readonly gets: number;
  readonly burst: number;
  /** HTTP bursts from `wrk` for this many seconds (`bench/lib/wrk.ts`); undefined: `burst` reads from Node clients. */
  readonly wrkSeconds?: number;
}

/** The sequential p50 on lane 0, then the 16-lane burst. */
export async function measureTaskGets(
  server: RunningServer,
  entry: TaskGetEntry,
  sizes: TaskGetSizes,
): Promise<TaskGetSample> {
  const lanes = await taskGetLanes(server, entry);
  const first = lanes[0]!;
  for (let i = 0; i < sizes.warmup; i += 1) await first.get(first.taskId);
  const times: number[] = [];
  for (let i = 0; i < sizes.gets; i += 1) {
    const start = performance.now();
    const status = await first.get(first.taskId);
    times.push(performance.now() - start);
    if (status !== 'working') throw new Error(`${entry.id}: task is ${status}`);
  }
  const p50Ms = percentile(times, 50);
  if (server.transport === 'http' && sizes.wrkSeconds !== undefined) {
    // Each lane's own request (its session or token), as its client sends it, from wrk's connections.
    const sends = lanes.map((lane) => () => lane.get(lane.taskId));
    const load = await wrkLoad(sends, sizes.wrkSeconds, '"working"');
    return { p50Ms, perSecond: load.perSecond };
  }
  const start = performance.now();
  await pool(sizes.burst, CLIENTS, async (_i, lane) => {
    const reader = lanes[lane % lanes.length]!;
    await reader.get(reader.taskId);
  });
  return { p50Ms, perSecond: sizes.burst / ((performance.now() - start) / 1000) };
}

/** The server of one entry on a fresh database, with extra node flags (`--cpu-prof`). */
export function taskGetSpec(env: BenchEnv, entry: TaskGetEntry, nodeFlags: readonly string[] = []): ServerSpec {
  const base =
    entry.server === 'B0'
      ? env.spec('B0', { pollMs: 1000 })
      : env.spec(entry.server, { pollMs: 1000, db: env.freshDb(entry.server, `get-${entry.id}`) });
  return { ...base, args: [...base.args, ...(entry.serverArgs ?? [])], nodeFlags };
}

/** Ratio targets: entry `ours` against entry `to`, on one metric. */
const TARGETS: readonly {
  readonly name: string;
  readonly ours: string;
  readonly to: string;
  readonly metric: keyof TaskGetSample;
  readonly bound: number;
  readonly atLeast: boolean;
}[] = [
  ...(
    [
      ['SQLite', 'http-fast'],
      ['PostgreSQL', 'http-pg-fast'],
    ] as const
  ).flatMap(([db, ours]) => [
    {
      name: `tasks/get, HTTP, 16 clients, req/s (${db}, fast path) vs B0`,
      ours,
      to: 'http-B0',
      metric: 'perSecond' as const,
      bound: 1.5,
      atLeast: true,
    },
    {
      name: `tasks/get, HTTP, 16 clients, req/s (${db}, fast path) vs floor`,
      ours,
      to: 'http-floor',
      metric: 'perSecond' as const,
      bound: 0.5,
      atLeast: true,
    },
    {
      name: `tasks/get, HTTP, 1 client, p50 (${db}, fast path) vs B0`,
      ours,
      to: 'http-B0',
      metric: 'p50Ms' as const,
      bound: 1,
      atLeast: false,
    },
  ]),
  {
    name: 'tasks/get, stdio, 16 clients, req/s (SQLite) vs B0',
    ours: 'stdio-sqlite',
    to: 'stdio-B0',
    metric: 'perSecond',
    bound: 1,
    atLeast: true,
  },
  {
    name: 'tasks/get, stdio, 16 clients, req/s (PostgreSQL) vs B0',
    ours: 'stdio-pg',
    to: 'stdio-B0',
    metric: 'perSecond',
    bound: 1,
    atLeast: true,
  },
];

export async function runTaskGets(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const notRun = (entry: TaskGetEntry): string | undefined => env.variants.find((v) => v.id === entry.server)?.notRun;
  const runnable = TASK_GET_WORKLOAD.filter((e) => notRun(e) === undefined);
  const sizes = {
    warmup: Math.min(200, config.taskGets),
    gets: config.taskGets,
    burst: config.taskGetBurst,
    ...(ctx.wrk === undefined ? {} : { wrkSeconds: config.wrkSeconds }),
  };
  const samples = new Map<string, TaskGetSample[]>();
  for (let round = 0; round < config.rounds; round += 1) {
    for (const entry of runnable) {
      ctx.log(`figure 8: round ${round + 1}/${config.rounds}, ${entry.id}`);
      const sample = await withServer(taskGetSpec(env, entry), entry.transport, (server) =>
        measureTaskGets(server, entry, sizes),
      );
      samples.set(entry.id, [...(samples.get(entry.id) ?? []), sample]);
    }
  }
  const summary = (id: string, metric: keyof TaskGetSample) => summarize((samples.get(id) ?? []).map((s) => s[metric]));

  const rows: Row[] = [];
  for (const [metric, name] of [
    ['p50Ms', 'tasks/get p50, 1 client (ms)'],
    ['perSecond', 'tasks/get req/s, 16 clients'],
  ] as const) {
    for (const entry of TASK_GET_WORKLOAD) {
      const setting = `${entry.transport}, ${WIRE_NAMES[entry.wire]}`;
      const reason = notRun(entry);
      if (reason !== undefined) {
        rows.push({ figure: 8, metric: name, variant: entry.label, setting, notRun: reason });
        continue;
      }
      const value = summary(entry.id, metric);
      const b0 = summary(`${entry.transport}-B0`, metric);
      rows.push({
        figure: 8,
        metric: name,
        variant: entry.label,
        setting,
        value,
        ...(entry.server === 'B0' ? {} : { ratio: { to: 'B0', value: value.median / b0.median } }),
      });
    }
  }
  const targets: Target[] = TARGETS.map((t) => {
    const ours = TASK_GET_WORKLOAD.find((e) => e.id === t.ours)!;
    const a = summary(t.ours, t.metric).median;
    const b = summary(t.to, t.metric).median;
    const to = t.to.endsWith('floor') ? 'floor' : 'B0';
    // On PostgreSQL the limit that binds is the floor on the same server, measured beside.
    const pgFloor = ours.server === 'postgres' ? summary(`${ours.transport}-floor-pg`, t.metric).median : NaN;
    const limit = Number.isFinite(pgFloor)
      ? `; the floor on PostgreSQL: ${fmt(pgFloor)} (${fmt(pgFloor / b)}x ${to})`
      : '';
    return ratioTarget({
      issue: 14,
      name: t.name,
      measured: a / b,
      bound: t.bound,
      atLeast: t.atLeast,
      unit: `x ${to}`,
      detail: `${fmt(a)} vs ${fmt(b)}${t.metric === 'p50Ms' ? ' ms' : ' req/s'}${limit}`,
      ...(notRun(ours) === undefined ? {} : { reason: notRun(ours) }),
    });
  });
  return { rows, targets };
}
