/**
 * What crosses from a worker thread to the gate for one series: compact, structured-cloneable.
 */
import type { SeriesOutcome } from './series.js';

/** A series outcome without its trace lines, plus a crash of the series itself if it crashed. */
export type SeriesSummary = Omit<SeriesOutcome, 'trace'> & {
  /** A crash of the series itself (a bug in the simulation or an unhandled rejection). */
  readonly error?: string;
};

export function summarize(outcome: SeriesOutcome): SeriesSummary {
  const { trace: _trace, ...summary } = outcome;
  return summary;
}
