/**
 * Figure 13 (issue 31 item 4): several nodes on one PostgreSQL. Each node is a process
 * (bench/cluster/node.ts: an engine with a runner on `openPostgresBackend`, concurrency 16).
 *
 * Throughput: with 1 node and with 4 nodes (rounds interleaved, a fresh schema each), a backlog of
 * 0 ms tasks is created at once through the store (batched creates, then one `created` NOTIFY);
 * the nodes claim (`SKIP LOCKED`), run and finish them. Tasks/s from the first create to the last
 * completion. Double claims: a task whose handler started more than once, or whose epoch is not 1.
 *
 * Crash: 4 nodes run 32 tasks, each 1.5 leases long; once every task has started, the
 * node running the most is killed with SIGKILL. Its tasks are claimed again by the others once
 * their lease expires (epoch 2); measured: the longest time from the kill to an orphan's second
 * start, against the lease, and from the lease's expiry (as the store held it) to that start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { requestDigest } from '../../src/core/digest.js';
import { silentLogger } from '../../src/core/ports.js';
import { openPostgresBackend } from '../../src/store/postgres/index.js';
import { pool } from '../client/tasks.js';
import { entryArgs } from '../lib/entries.js';
import { ROOT } from '../lib/proc.js';
import { ratioTarget, type Row, type Target } from '../lib/report.js';
import { summarize, wallMs } from '../lib/stats.js';
import type { FigureContext, FigureResult } from './context.js';

/** What one handler start printed. */
interface Start {
  readonly taskId: string;
  readonly epoch: number;
  readonly at: number;
  readonly node: string;
}

interface ClusterNode {
  readonly id: string;
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  stop(): Promise<void>;
  kill9(): Promise<void>;
}

const CONCURRENCY = 16;
/** The runner's idle claim interval, jittered to at most 1.25x (engine defaults). */
const CLAIM_INTERVAL_MAX_MS = 313;

function startNode(url: string, schema: string, id: string, leaseMs: number, starts: Start[]): ClusterNode {
  const args = ['--url', url, '--schema', schema, '--node-id', id, '--concurrency', String(CONCURRENCY)];
  const child = spawn(
    process.execPath,
    [...entryArgs('bench/cluster/node.ts'), ...args, '--lease-ms', String(leaseMs)],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`node ${id} exited (${code}) before ready: ${stderr}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === 'ready') resolve();
      const match = /^start (\S+) (\d+) ([\d.]+)$/.exec(line);
      if (match !== null) starts.push({ taskId: match[1]!, epoch: Number(match[2]), at: Number(match[3]), node: id });
    });
  });
  const signal = async (sig: NodeJS.Signals): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(sig);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return { id, child, ready, stop: () => signal('SIGTERM'), kill9: () => signal('SIGKILL') };
}

/** Creates `count` tasks of `ms` through the store (batched), then wakes every node with one NOTIFY. */
async function createBacklog(url: string, schema: string, count: number, ms: number): Promise<void> {
  const backend = await openPostgresBackend({
    connectionString: url,
    schema,
    applicationName: 'bench-producer',
    logger: silentLogger,
  });
  try {
    const args = { ms };
    const now = Date.now();
    await pool(count, 64, async (i) => {
      await backend.store.create({
        id: `task-${i.toString().padStart(6, '0')}-${now}`,
        owner: 'bench',
        tool: 'bench_job',
        args,
        requestDigest: requestDigest('bench_job', args),
        submissionKey: null,
        wire: 'mcp-tasks-ext',
        ttlMs: 3_600_000,
        keepAliveMs: null,
        pollIntervalMs: 1000,
        now,
      });
    });
    backend.events.publish({ taskId: 'backlog', kind: 'created' });
  } finally {
    await backend.close();
  }
}

async function until(client: pg.Client, sql: string, done: (n: number) => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const n = Number((await client.query<{ n: string }>(sql)).rows[0]?.n ?? 0);
    if (done(n)) return;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${sql} (last ${n})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Throughput {
  readonly tasksPerSecond: number;
  readonly doubleClaims: number;
}

async function throughput(
  url: string,
  schema: string,
  nodes: number,
  tasks: number,
  leaseMs: number,
): Promise<Throughput> {
  const starts: Start[] = [];
  // The schema first (migrations once), so the nodes start on it together.
  await (
    await openPostgresBackend({ connectionString: url, schema, applicationName: 'bench-setup', logger: silentLogger })
  ).close();
  const running = Array.from({ length: nodes }, (_, i) => startNode(url, schema, `node-${i + 1}`, leaseMs, starts));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await Promise.all(running.map((n) => n.ready));
    const t0 = wallMs();
    await createBacklog(url, schema, tasks, 0);
    await until(
      client,
      `SELECT count(*) AS n FROM "${schema}".tasks WHERE status = 'completed'`,
      (n) => n >= tasks,
      300_000,
    );
    const seconds = (wallMs() - t0) / 1000;
    const reclaimed = Number(
      (await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".tasks WHERE epoch <> 1`)).rows[0]?.n,
    );
    const perTask = new Map<string, number>();
    for (const s of starts) perTask.set(s.taskId, (perTask.get(s.taskId) ?? 0) + 1);
    const twice = [...perTask.values()].filter((n) => n > 1).length;
    return { tasksPerSecond: tasks / seconds, doubleClaims: twice + reclaimed };
  } finally {
    await client.end();
    await Promise.all(running.map((n) => n.stop()));
  }
}

interface Crash {
  readonly orphans: number;
  readonly afterKillMs: number;
  readonly afterExpiryMs: number;
  readonly doubleClaims: number;
}

async function crash(url: string, schema: string, leaseMs: number): Promise<Crash> {
  const starts: Start[] = [];
  await (
    await openPostgresBackend({ connectionString: url, schema, applicationName: 'bench-setup', logger: silentLogger })
  ).close();
  const running = Array.from({ length: 4 }, (_, i) => startNode(url, schema, `node-${i + 1}`, leaseMs, starts));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const tasks = 2 * CONCURRENCY;
  try {
    await Promise.all(running.map((n) => n.ready));
    await createBacklog(url, schema, tasks, Math.round(leaseMs * 1.5));
    const deadline = performance.now() + 60_000;
    while (new Set(starts.map((s) => s.taskId)).size < tasks) {
      if (performance.now() > deadline) throw new Error('not every task started');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const byNode = new Map<string, number>();
    for (const s of starts) byNode.set(s.node, (byNode.get(s.node) ?? 0) + 1);
    const victim = [...byNode].sort((a, b) => b[1] - a[1])[0]![0];
    const node = running.find((n) => n.id === victim)!;
    const killedAt = wallMs();
    await node.kill9();
    const leases = (
      await client.query<{ id: string; lease_expires_at: string }>(
        `SELECT id, lease_expires_at FROM "${schema}".tasks WHERE lease_owner = $1`,
        [victim],
      )
    ).rows;
    await until(
      client,
      `SELECT count(*) AS n FROM "${schema}".tasks WHERE status = 'completed'`,
      (n) => n >= tasks,
      120_000 + leaseMs * 3,
    );
    const orphans = leases.map((l) => ({ id: l.id, expiry: Number(l.lease_expires_at) }));
    let afterKillMs = 0;
    let afterExpiryMs = -Infinity;
    for (const orphan of orphans) {
      const again = starts.find((s) => s.taskId === orphan.id && s.epoch === 2 && s.node !== victim);
      if (again === undefined) throw new Error(`orphan ${orphan.id} was not claimed again`);
      afterKillMs = Math.max(afterKillMs, again.at - killedAt);
      afterExpiryMs = Math.max(afterExpiryMs, again.at - orphan.expiry);
    }
    const perEpoch = new Map<string, number>();
    for (const s of starts) perEpoch.set(`${s.taskId}/${s.epoch}`, (perEpoch.get(`${s.taskId}/${s.epoch}`) ?? 0) + 1);
    const doubleClaims = [...perEpoch.values()].filter((n) => n > 1).length;
    return { orphans: orphans.length, afterKillMs, afterExpiryMs, doubleClaims };
  } finally {
    await client.end();
    await Promise.all(running.map((n) => n.stop()));
  }
}

export async function runCluster(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const postgres = env.variants.find((v) => v.id === 'postgres');
  const notRun = postgres?.notRun ?? (env.pgUrl === undefined ? 'no PostgreSQL' : undefined);
  const sizes = [1, 4] as const;
  const rates = new Map<number, number[]>();
  let doubleClaims = 0;
  const crashes: Crash[] = [];
  const leaseMs = config.clusterLeaseMs;
  if (notRun === undefined && env.pgUrl !== undefined) {
    for (let round = 0; round < config.rounds; round += 1) {
      for (const nodes of sizes) {
        ctx.log(`figure 13: round ${round + 1}/${config.rounds}, ${nodes} node(s), ${config.clusterTasks} tasks`);
        const db = env.freshDb('postgres', `cluster-${nodes}`);
        if (db.kind !== 'postgres') throw new Error('figure 13 runs on PostgreSQL');
        const run = await throughput(env.pgUrl, db.schema, nodes, config.clusterTasks, leaseMs);
        rates.set(nodes, [...(rates.get(nodes) ?? []), run.tasksPerSecond]);
        doubleClaims += run.doubleClaims;
      }
      ctx.log(`figure 13: round ${round + 1}/${config.rounds}, kill -9 of one of 4 nodes (lease ${leaseMs} ms)`);
      const db = env.freshDb('postgres', 'cluster-crash');
      if (db.kind !== 'postgres') throw new Error('figure 13 runs on PostgreSQL');
      const result = await crash(env.pgUrl, db.schema, leaseMs);
      crashes.push(result);
      doubleClaims += result.doubleClaims;
    }
  }
  const rows: Row[] = [];
  const one = summarize(rates.get(1) ?? []);
  for (const nodes of sizes) {
    const metric = 'tasks/s, all nodes together';
    const variant = `ours PostgreSQL, ${nodes} node${nodes === 1 ? '' : 's'}`;
    const setting = `${config.clusterTasks} tasks of 0 ms created at once, concurrency ${CONCURRENCY} per node`;
    if (notRun !== undefined) {
      rows.push({ figure: 13, metric, variant, setting, notRun });
      continue;
    }
    const value = summarize(rates.get(nodes) ?? []);
    rows.push({
      figure: 13,
      metric,
      variant,
      setting,
      value,
      ...(nodes === 1 ? {} : { ratio: { to: '1 node', value: value.median / one.median } }),
    });
  }
  const crashSetting = `4 nodes, ${2 * CONCURRENCY} tasks of 1.5 leases, lease ${leaseMs} ms, the busiest node killed`;
  const crashRows: [string, (c: Crash) => number, string][] = [
    ['re-claim after kill -9, longest (ms)', (c) => c.afterKillMs, 'from the kill to the orphan started again'],
    [
      're-claim after the lease expired, longest (ms)',
      (c) => c.afterExpiryMs,
      `claim interval at most ${CLAIM_INTERVAL_MAX_MS} ms`,
    ],
    ['orphaned tasks', (c) => c.orphans, 'each claimed again at epoch 2 and completed'],
  ];
  for (const [metric, pick, note] of crashRows) {
    if (notRun !== undefined)
      rows.push({ figure: 13, metric, variant: 'ours PostgreSQL', setting: crashSetting, notRun });
    else
      rows.push({
        figure: 13,
        metric,
        variant: 'ours PostgreSQL',
        setting: crashSetting,
        value: summarize(crashes.map(pick)),
        note,
      });
  }
  if (notRun !== undefined) {
    rows.push({
      figure: 13,
      metric: 'double claims',
      variant: 'ours PostgreSQL',
      setting: 'every run of this figure',
      notRun,
    });
  } else {
    rows.push({
      figure: 13,
      metric: 'double claims',
      variant: 'ours PostgreSQL',
      setting: 'every run of this figure',
      value: summarize([doubleClaims]),
      note: 'a task started twice at one epoch, or claimed again without a kill',
    });
  }
  const reason = notRun === undefined ? {} : { reason: notRun };
  const four = summarize(rates.get(4) ?? []).median;
  const worstKill = Math.max(...crashes.map((c) => c.afterKillMs));
  const targets: Target[] = [
    ratioTarget({
      name: '4 nodes on one PostgreSQL, tasks/s vs 1 node (no lock convoy)',
      measured: four / one.median,
      bound: 0.9,
      atLeast: true,
      unit: 'x 1 node',
      issue: 31,
      detail: `${four.toFixed(0)} vs ${one.median.toFixed(0)} tasks/s`,
      ...reason,
    }),
    ratioTarget({
      name: 'double claims across every run of figure 13',
      measured: doubleClaims,
      bound: 0,
      atLeast: false,
      unit: ' double claims',
      issue: 31,
      ...reason,
    }),
    ratioTarget({
      name: "a killed node's tasks claimed again within its lease (plus one claim interval)",
      measured: worstKill / (leaseMs + CLAIM_INTERVAL_MAX_MS),
      bound: 1,
      atLeast: false,
      unit: 'x (lease + claim interval)',
      issue: 31,
      detail: `${worstKill.toFixed(0)} ms vs ${leaseMs} + ${CLAIM_INTERVAL_MAX_MS} ms`,
      ...(notRun === undefined ? (crashes.length === 0 ? { reason: 'no crash run' } : {}) : reason),
    }),
  ];
  return { rows, targets };
}
