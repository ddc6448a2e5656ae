/**
 * What crosses from a worker thread to the gate for one series: compact, structured-cloneable.
 */
import type { Violation } from './checks.js';
import type { SeriesMetrics } from './checks.js';
import type { FaultClass } from './faults.js';
import type { SeriesOutcome } from './series.js';

export interface SeriesSummary {
  readonly seed: number;
  readonly plan: readonly string[];
  readonly violations: readonly Violation[];
  readonly metrics: SeriesMetrics;
  readonly faultsFired: Readonly<Partial<Record<FaultClass, number>>>;
  readonly statesReached: Readonly<Record<string, number>>;
  readonly traceDigest: string;
  readonly virtualMs: number;
  /** A crash of the series itself (a bug in the simulation or an unhandled rejection). */
  readonly error?: string;
}

export function summarize(outcome: SeriesOutcome): SeriesSummary {
  return {
    seed: outcome.seed,
    plan: outcome.plan,
    violations: outcome.violations,
    metrics: outcome.metrics,
    faultsFired: outcome.faultsFired,
    statesReached: outcome.statesReached,
    traceDigest: outcome.traceDigest,
    virtualMs: outcome.virtualMs,
  };
}
