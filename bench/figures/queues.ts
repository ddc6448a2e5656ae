/**
 * Figure 12 (issue 31): ours on PostgreSQL against the job queues a user would run there instead,
 * pg-boss and graphile-worker, on the same PostgreSQL server with the same durability
 * (`synchronous_commit` as the server has it, `on` unless someone changed it: it is printed), one
 * system per process (bench/queues/run.ts), rounds interleaved. Rows: jobs/s and add-to-start p50
 * and p99 at 1 and at 16 producers, for each queue, ours through the engine API and ours through
 * `tools/call` + `tasks/get` over HTTP (the server on the server CPUs, the client process on the
 * load CPUs when pinning is available). Two limits are measured in the same run beside them: a
 * PostgreSQL round trip and a commit on one connection.
 */
import { spawn } from 'node:child_process';
import pg from 'pg';
import { entryArgs } from '../lib/entries.js';
import { onCpus } from '../lib/pin.js';
import { ROOT, withServer } from '../lib/proc.js';
import { ratioTarget, type Row, type Target } from '../lib/report.js';
import { summarize } from '../lib/stats.js';
import type { QueueRun, SystemId } from '../queues/run.js';
import type { FigureContext, FigureResult } from './context.js';

const SYSTEMS: readonly { readonly id: SystemId; readonly label: string }[] = [
  { id: 'pg-boss', label: 'pg-boss 12' },
  { id: 'graphile-worker', label: 'graphile-worker 0.18' },
  { id: 'engine', label: 'ours PostgreSQL, engine API' },
  { id: 'http', label: 'ours PostgreSQL, tools/call + tasks/get over HTTP' },
];
const QUEUES: readonly SystemId[] = ['pg-boss', 'graphile-worker'];

type Key = `${SystemId}/${number}`;

/** Runs bench/queues/run.ts once; resolves with its JSON line. */
function runOnce(args: readonly string[], cpus: string | undefined): Promise<QueueRun> {
  const [command, argv] = onCpus(cpus, process.execPath, [...entryArgs('bench/queues/run.ts'), ...args]);
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString('utf8')).slice(-4000)));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`queue run ${args.join(' ')} exited ${code}: ${err}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as QueueRun);
    });
  });
}

interface Limits {
  readonly roundTripMs: number;
  readonly commitsPerSecond: number;
  readonly settings: string;
}

/** One connection: sequential `SELECT 1` (a round trip) and one-row INSERTs in autocommit (a commit each). */
async function measureLimits(url: string, schema: string, samples: number): Promise<Limits> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const show = async (name: string): Promise<string> =>
      String((await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0]?.[name]);
    const settings = `synchronous_commit=${await show('synchronous_commit')}, fsync=${await show('fsync')}`;
    for (let i = 0; i < 20; i += 1) await client.query('SELECT 1');
    let start = performance.now();
    for (let i = 0; i < samples; i += 1) await client.query('SELECT 1');
    const roundTripMs = (performance.now() - start) / samples;
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE "${schema}".commit_probe (n int)`);
    start = performance.now();
    for (let i = 0; i < samples; i += 1) await client.query(`INSERT INTO "${schema}".commit_probe VALUES ($1)`, [i]);
    const commitsPerSecond = samples / ((performance.now() - start) / 1000);
    return { roundTripMs, commitsPerSecond, settings };
  } finally {
    await client.end();
  }
}

export async function runQueues(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const postgres = env.variants.find((v) => v.id === 'postgres');
  const notRun = postgres?.notRun ?? (env.pgUrl === undefined ? 'no PostgreSQL' : undefined);
  const loads = config.queueProducers.map((producers, i) => ({ producers, jobs: config.queueJobs[i] ?? 100 }));
  const results = new Map<Key, QueueRun[]>();
  let limits: Limits | undefined;
  if (notRun === undefined && env.pgUrl !== undefined) {
    const url = env.pgUrl;
    const probe = env.freshDb('postgres', 'limits');
    limits = await measureLimits(
      url,
      probe.kind === 'postgres' ? probe.schema : 'bench_limits',
      config.quick ? 50 : 500,
    );
    for (let round = 0; round < config.rounds; round += 1) {
      for (const { producers, jobs } of loads) {
        for (const system of SYSTEMS) {
          ctx.log(`figure 12: round ${round + 1}/${config.rounds}, ${producers} producer(s), ${system.id}`);
          const db = env.freshDb('postgres', `queue-${system.id}`);
          if (db.kind !== 'postgres') throw new Error('figure 12 runs on PostgreSQL');
          const common = [
            '--producers',
            String(producers),
            '--jobs',
            String(jobs),
            '--warmup',
            String(config.queueWarmup),
          ];
          let run: QueueRun;
          if (system.id === 'http') {
            const spec = { ...env.spec('postgres', { pollMs: 100, db }), cpus: ctx.pinning.serverCpus };
            run = await withServer(spec, 'http', (server) =>
              runOnce(['--system', 'http', '--url', server.url ?? '', ...common], ctx.pinning.loadCpus),
            );
          } else {
            run = await runOnce(['--system', system.id, '--url', url, '--schema', db.schema, ...common], undefined);
          }
          const key: Key = `${system.id}/${producers}`;
          results.set(key, [...(results.get(key) ?? []), run]);
        }
      }
    }
  }

  const rows: Row[] = [];
  const median = (system: SystemId, producers: number, pick: (r: QueueRun) => number) =>
    summarize((results.get(`${system}/${producers}`) ?? []).map(pick));
  const best = (producers: number, pick: (r: QueueRun) => number, higher: boolean): number => {
    const values = QUEUES.map((q) => median(q, producers, pick).median);
    return higher ? Math.max(...values) : Math.min(...values);
  };
  const metrics = [
    { metric: 'jobs/s', pick: (r: QueueRun) => r.jobsPerSecond, higher: true, to: 'the faster queue' },
    { metric: 'add-to-start p50 (ms)', pick: (r: QueueRun) => r.addToStartP50, higher: false, to: 'the lower queue' },
    { metric: 'add-to-start p99 (ms)', pick: (r: QueueRun) => r.addToStartP99, higher: false, to: 'the lower queue' },
  ];
  for (const { producers, jobs } of loads) {
    for (const m of metrics) {
      for (const system of SYSTEMS) {
        const setting = `${producers} producer${producers === 1 ? '' : 's'}, ${jobs} jobs of 0 ms, closed loop`;
        if (notRun !== undefined) {
          rows.push({ figure: 12, metric: m.metric, variant: system.label, setting, notRun });
          continue;
        }
        const value = median(system.id, producers, m.pick);
        const ours = !QUEUES.includes(system.id);
        const reads = median(system.id, producers, (r) => r.readsPerJob).median;
        const toResult = median(system.id, producers, (r) => r.addToResultP50).median;
        rows.push({
          figure: 12,
          metric: m.metric,
          variant: system.label,
          setting,
          value,
          ...(ours ? { ratio: { to: m.to, value: value.median / best(producers, m.pick, m.higher) } } : {}),
          ...(m.metric === 'jobs/s'
            ? { note: `add-to-result p50 ${toResult.toFixed(1)} ms; ${reads.toFixed(2)} result reads per job` }
            : {}),
        });
      }
    }
  }
  const limitSetting = `one connection, sequential${limits === undefined ? '' : `; ${limits.settings}`}`;
  const limitRows: [string, number | undefined][] = [
    ['limit: PostgreSQL round trip, SELECT 1 (ms)', limits?.roundTripMs],
    ['limit: PostgreSQL commits/s, one-row INSERT', limits?.commitsPerSecond],
  ];
  for (const [metric, value] of limitRows) {
    rows.push(
      value === undefined
        ? { figure: 12, metric, variant: 'PostgreSQL', setting: limitSetting, notRun: notRun ?? 'not measured' }
        : { figure: 12, metric, variant: 'PostgreSQL', setting: limitSetting, value: summarize([value]) },
    );
  }

  const top = Math.max(...config.queueProducers);
  const jobsRatio = median('engine', top, (r) => r.jobsPerSecond).median / best(top, (r) => r.jobsPerSecond, true);
  const p50Ratio = median('engine', top, (r) => r.addToStartP50).median / best(top, (r) => r.addToStartP50, false);
  const reason = notRun === undefined ? {} : { reason: notRun };
  const targets: Target[] = [
    ratioTarget({
      name: `jobs/s, ${top} producers (PostgreSQL, engine API) vs the faster of pg-boss and graphile-worker`,
      measured: jobsRatio,
      bound: 1,
      atLeast: true,
      unit: 'x the faster queue',
      issue: 31,
      detail: `${median('engine', top, (r) => r.jobsPerSecond).median.toFixed(0)} vs ${best(top, (r) => r.jobsPerSecond, true).toFixed(0)} jobs/s`,
      ...reason,
    }),
    ratioTarget({
      name: `add-to-start p50, ${top} producers (PostgreSQL, engine API) vs the lower of pg-boss's and graphile-worker's`,
      measured: p50Ratio,
      bound: 1,
      atLeast: false,
      unit: 'x the lower queue',
      issue: 31,
      detail: `${median('engine', top, (r) => r.addToStartP50).median.toFixed(2)} vs ${best(top, (r) => r.addToStartP50, false).toFixed(2)} ms`,
      ...reason,
    }),
  ];
  return { rows, targets };
}
