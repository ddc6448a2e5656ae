/**
 * Sizes of a run. `--quick` is the smoke run (tiny counts, one round: it checks structure, not
 * speed); the full run is sized to finish within about 25 minutes on an idle 2-core machine
 * (docs/benchmarks.md, "Running it", says how that was estimated). Every size can be overridden on
 * the command line.
 */
import { parseArgs } from 'node:util';

export const FIGURES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13] as const;
export type FigureId = (typeof FIGURES)[number];

export interface BenchConfig {
  readonly quick: boolean;
  readonly json: boolean;
  /** Interleaved rounds per figure (A B C A B C ...). */
  readonly rounds: number;
  readonly seed: number;
  readonly figures: readonly FigureId[];
  /** Skip PostgreSQL even when one could be started. */
  readonly noPostgres: boolean;
  /** Figure 1: submissions per measurement, for 1 and for 16 concurrent clients. */
  readonly submissions: number;
  readonly concurrency: readonly number[];
  /** Figure 2: open tasks in the store, and sequential `tasks/get` calls measured per run. */
  readonly openTasks: readonly number[];
  readonly gets: number;
  /** Figure 2, issue 14: reads of a client polling every `pollEveryMs`, at the largest size only. */
  readonly polledGets: number;
  readonly pollEveryMs: number;
  /** Figure 3: tasks per run, their duration and the poll interval the servers advertise. */
  readonly acceptanceTasks: number;
  readonly acceptanceTaskMs: number;
  readonly pollMs: number;
  /** Figure 4: tasks over a lognormal mix of durations (median, sigma), and the executor's QPS cap. */
  readonly pollTasks: number;
  readonly pollMedianMs: number;
  readonly pollSigma: number;
  readonly qps: number;
  /** Figure 5: sequential calls per measurement. */
  readonly overheadCalls: number;
  /** Figure 6: open tasks and ledger entries measured. */
  readonly memoryOpen: number;
  readonly memoryLedger: number;
  /** Figure 7: tasks in flight at the kill. */
  readonly recovery: readonly number[];
  /** Rounds of figure 7 (each round submits every size again). */
  readonly recoveryRounds: number;
  /** Figure 8: sequential `tasks/get` at 1 client (after a warm-up), and the 16-client burst. */
  readonly taskGets: number;
  readonly taskGetBurst: number;
  /**
   * HTTP loads (figure 1's submissions, figure 8's 16-client reads): seconds of load from `wrk`
   * (`bench/lib/wrk.ts`) when it is on the PATH; `noWrk` uses the harness's Node clients and the
   * counts `submissions` and `taskGetBurst` instead.
   */
  readonly wrkSeconds: number;
  readonly noWrk: boolean;
  /** Figure 9: open tasks the claim is timed at (the target compares the largest to the smallest), samples per size. */
  readonly claimOpen: readonly number[];
  readonly claimSamples: number;
  /** Figure 10: another caller's reads per phase (idle, loaded), each phase bounded by `threadPhaseMs`. */
  readonly threadReads: number;
  readonly threadPhaseMs: number;
  /** Figure 11: sequential 0 ms tasks, submit to terminal, per measurement. */
  readonly commitTasks: number;
  /** Figure 12: producers of each measurement, the jobs each measures (paired), and unmeasured warm-up jobs. */
  readonly queueProducers: readonly number[];
  readonly queueJobs: readonly number[];
  readonly queueWarmup: number;
  /** Figure 13: tasks of each throughput run (1 and 4 nodes), and the lease of its nodes (the kill -9 run waits for it). */
  readonly clusterTasks: number;
  readonly clusterLeaseMs: number;
  /** The command line, for the report. */
  readonly command: string;
}

const FULL: Omit<BenchConfig, 'quick' | 'json' | 'figures' | 'noPostgres' | 'noWrk' | 'command'> = {
  rounds: 3,
  seed: 7,
  submissions: 200,
  concurrency: [1, 16],
  openTasks: [1000, 100_000],
  gets: 1000,
  polledGets: 1000,
  pollEveryMs: 5,
  acceptanceTasks: 100,
  acceptanceTaskMs: 50,
  pollMs: 250,
  pollTasks: 200,
  pollMedianMs: 400,
  pollSigma: 1,
  qps: 50,
  overheadCalls: 50,
  memoryOpen: 100_000,
  memoryLedger: 2000,
  recovery: [1000, 10_000],
  recoveryRounds: 3,
  taskGets: 1000,
  taskGetBurst: 3000,
  wrkSeconds: 5,
  claimOpen: [1000, 100_000],
  claimSamples: 200,
  threadReads: 300,
  threadPhaseMs: 10_000,
  commitTasks: 100,
  queueProducers: [1, 16],
  queueJobs: [300, 2000],
  queueWarmup: 100,
  clusterTasks: 2000,
  clusterLeaseMs: 10_000,
};

const QUICK: typeof FULL = {
  rounds: 1,
  seed: 7,
  submissions: 30,
  concurrency: [1, 16],
  openTasks: [200],
  gets: 50,
  polledGets: 30,
  pollEveryMs: 5,
  acceptanceTasks: 10,
  acceptanceTaskMs: 20,
  pollMs: 250,
  pollTasks: 10,
  pollMedianMs: 100,
  pollSigma: 0.5,
  qps: 50,
  overheadCalls: 10,
  memoryOpen: 500,
  memoryLedger: 200,
  recovery: [50],
  recoveryRounds: 1,
  taskGets: 50,
  taskGetBurst: 200,
  wrkSeconds: 1,
  claimOpen: [200, 2000],
  claimSamples: 20,
  threadReads: 20,
  threadPhaseMs: 5000,
  commitTasks: 10,
  queueProducers: [1, 16],
  queueJobs: [20, 80],
  queueWarmup: 10,
  clusterTasks: 200,
  clusterLeaseMs: 3000,
};

const list = (value: string): number[] => value.split(',').map((v) => Number(v.trim()));

export function parseConfig(argv: readonly string[]): BenchConfig {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'no-postgres': { type: 'boolean', default: false },
      'no-wrk': { type: 'boolean', default: false },
      'wrk-seconds': { type: 'string' },
      figures: { type: 'string' },
      rounds: { type: 'string' },
      seed: { type: 'string' },
      submissions: { type: 'string' },
      open: { type: 'string' },
      gets: { type: 'string' },
      'acceptance-tasks': { type: 'string' },
      'poll-tasks': { type: 'string' },
      qps: { type: 'string' },
      'overhead-calls': { type: 'string' },
      'memory-open': { type: 'string' },
      'memory-ledger': { type: 'string' },
      recovery: { type: 'string' },
      'recovery-rounds': { type: 'string' },
      'polled-gets': { type: 'string' },
      'poll-every-ms': { type: 'string' },
      'task-gets': { type: 'string' },
      'task-get-burst': { type: 'string' },
      'claim-open': { type: 'string' },
      'claim-samples': { type: 'string' },
      'thread-reads': { type: 'string' },
      'thread-phase-ms': { type: 'string' },
      'commit-tasks': { type: 'string' },
      'queue-producers': { type: 'string' },
      'queue-jobs': { type: 'string' },
      'queue-warmup': { type: 'string' },
      'cluster-tasks': { type: 'string' },
      'cluster-lease-ms': { type: 'string' },
    },
  });
  const base = values.quick === true ? QUICK : FULL;
  const num = (value: string | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new RangeError(`not a positive number: ${value}`);
    return n;
  };
  const figures = values.figures === undefined ? [...FIGURES] : list(values.figures);
  for (const f of figures) {
    if (!(FIGURES as readonly number[]).includes(f))
      throw new RangeError(`no figure ${f}; figures are 1..${FIGURES.length}`);
  }
  return {
    ...base,
    quick: values.quick === true,
    json: values.json === true,
    noPostgres: values['no-postgres'] === true,
    noWrk: values['no-wrk'] === true,
    figures: figures as FigureId[],
    rounds: num(values.rounds, base.rounds),
    seed: num(values.seed, base.seed),
    submissions: num(values.submissions, base.submissions),
    openTasks: values.open === undefined ? base.openTasks : list(values.open),
    gets: num(values.gets, base.gets),
    acceptanceTasks: num(values['acceptance-tasks'], base.acceptanceTasks),
    pollTasks: num(values['poll-tasks'], base.pollTasks),
    qps: num(values.qps, base.qps),
    overheadCalls: num(values['overhead-calls'], base.overheadCalls),
    memoryOpen: num(values['memory-open'], base.memoryOpen),
    memoryLedger: num(values['memory-ledger'], base.memoryLedger),
    recovery: values.recovery === undefined ? base.recovery : list(values.recovery),
    recoveryRounds: num(values['recovery-rounds'], base.recoveryRounds),
    polledGets: num(values['polled-gets'], base.polledGets),
    pollEveryMs: num(values['poll-every-ms'], base.pollEveryMs),
    taskGets: num(values['task-gets'], base.taskGets),
    taskGetBurst: num(values['task-get-burst'], base.taskGetBurst),
    wrkSeconds: num(values['wrk-seconds'], base.wrkSeconds),
    claimOpen: values['claim-open'] === undefined ? base.claimOpen : list(values['claim-open']),
    claimSamples: num(values['claim-samples'], base.claimSamples),
    threadReads: num(values['thread-reads'], base.threadReads),
    threadPhaseMs: num(values['thread-phase-ms'], base.threadPhaseMs),
    commitTasks: num(values['commit-tasks'], base.commitTasks),
    queueProducers: values['queue-producers'] === undefined ? base.queueProducers : list(values['queue-producers']),
    queueJobs: values['queue-jobs'] === undefined ? base.queueJobs : list(values['queue-jobs']),
    queueWarmup: num(values['queue-warmup'], base.queueWarmup),
    clusterTasks: num(values['cluster-tasks'], base.clusterTasks),
    clusterLeaseMs: num(values['cluster-lease-ms'], base.clusterLeaseMs),
    command: ['npm run bench', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' '),
  };
}
