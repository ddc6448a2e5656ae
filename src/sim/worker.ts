/**
 * Worker-thread entry: runs the seeds it is given and posts one summary per series.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { NO_METRICS } from './checks/metrics.js';
import type { FaultClass } from './faults.js';
import { seedsOf, type Seeds } from './seeds.js';
import { runSeries } from './series.js';
import { summarize, type SeriesSummary } from './summary.js';
import type { SimWireName } from './wires/index.js';

interface Job {
  readonly seeds: Seeds;
  /** This worker's share of the seeds: every `shares`-th, from the `share`-th on. */
  readonly share: number;
  readonly shares: number;
  readonly faults?: readonly FaultClass[];
  readonly wire?: SimWireName;
}

const job = workerData as Job;
const port = parentPort;
if (port === null) throw new Error('sim worker must run in a worker thread');
for (const seed of seedsOf(job.seeds, job.share, job.shares)) {
  let summary: SeriesSummary;
  try {
    summary = summarize(
      await runSeries({
        seed,
        ...(job.faults === undefined ? {} : { faults: job.faults }),
        ...(job.wire === undefined ? {} : { wire: job.wire }),
      }),
    );
  } catch (error) {
    summary = crashed(seed, job.wire ?? 'mcp-tasks-ext', error);
  }
  port.postMessage(summary);
}

function crashed(seed: number, wire: SimWireName, error: unknown): SeriesSummary {
  return {
    seed,
    wire,
    plan: [],
    violations: [],
    metrics: NO_METRICS,
    faultsFired: {},
    statesReached: {},
    traceDigest: '',
    virtualMs: 0,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  };
}
