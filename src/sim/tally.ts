/**
 * The gate's running totals: series summaries are folded in one at a time and dropped, so a run's
 * memory does not grow with its series count (100,000 held summaries peaked at 4.6 GB RSS).
 *
 * Everything is exact. Counts and sums are numbers; the three latency figures are counted per
 * virtual millisecond (`MsHistogram`): the simulation's times are whole milliseconds bounded by the
 * liveness bound (a few hundred thousand distinct values at most), so the p99 of a million series is
 * the same number the sorted list gave, in bounded memory. Failing series are kept in full up to
 * `KEPT_FAILURES` (with their replay command, printed by the CLI), then by seed and invariant only.
 */
import type { SeriesSummary } from './summary.js';

/** Failing series kept whole; past this only their seed and invariants are kept (a broken build fails every series). */
export const KEPT_FAILURES = 100;

/** Counts of whole-millisecond values; exact quantiles in memory bounded by the value range. */
export class MsHistogram {
  readonly #counts = new Map<number, number>();
  #n = 0;

  add(ms: number): void {
    const key = Math.round(ms);
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    this.#n++;
  }

  get count(): number {
    return this.#n;
  }

  /** The nearest-rank quantile (as `sorted[ceil(n*q)-1]`), 0 when empty. */
  quantile(q: number): number {
    if (this.#n === 0) return 0;
    const rank = Math.min(this.#n, Math.max(1, Math.ceil(this.#n * q)));
    let seen = 0;
    for (const key of [...this.#counts.keys()].sort((a, b) => a - b)) {
      seen += this.#counts.get(key) as number;
      if (seen >= rank) return key;
    }
    return 0;
  }
}

/** A failing series past `KEPT_FAILURES`: enough to name it and replay it. */
export interface FailingSeed {
  readonly seed: number;
  readonly invariants: readonly string[];
  readonly crashed: boolean;
}

export class GateTally {
  series = 0;
  divergences = 0;
  secondOperations = 0;
  duplicateSubmissions = 0;
  polls = 0;
  idealPolls = 0;
  peakPollsPerSecond = 0;
  outboxRows = 0;
  outboxTraced = 0;
  /** UNKNOWNs settled by being listed for an operator (wires without a key lookup). */
  unknownByHand = 0;
  readonly cancel = new MsHistogram();
  readonly cancelOwn = new MsHistogram();
  readonly unknown = new MsHistogram();
  /** UNKNOWN stretches with a hand-over to an operator timed to the hand-over (`unknownReconcileOwnMs`). */
  readonly unknownOwn = new MsHistogram();
  unknownHandedOver = 0;
  readonly byInvariant = new Map<string, number>();
  readonly faults = new Map<string, number>();
  readonly states = new Map<string, number>();
  readonly failing: SeriesSummary[] = [];
  readonly moreFailing: FailingSeed[] = [];

  add(s: SeriesSummary): void {
    this.series++;
    if (s.error !== undefined || s.violations.length > 0) {
      if (this.failing.length < KEPT_FAILURES) this.failing.push(s);
      else {
        const invariants = [...new Set(s.violations.map((v) => v.invariant))];
        this.moreFailing.push({ seed: s.seed, invariants, crashed: s.error !== undefined });
      }
    }
    for (const v of s.violations) bump(this.byInvariant, v.invariant, 1);
    if (s.error !== undefined) bump(this.byInvariant, 'series error', 1);
    const m = s.metrics;
    this.divergences += m.divergences;
    this.secondOperations += m.secondOperations;
    this.duplicateSubmissions += m.duplicateSubmissions;
    this.polls += m.polls;
    this.idealPolls += m.idealPolls;
    this.peakPollsPerSecond = Math.max(this.peakPollsPerSecond, m.maxPollsPerSecond);
    this.outboxRows += m.outboxRows;
    this.outboxTraced += m.outboxTraced;
    for (const ms of m.cancelConfirmMs) this.cancel.add(ms);
    for (const ms of m.cancelConfirmOwnMs) this.cancelOwn.add(ms);
    for (const ms of m.unknownReconcileMs) this.unknown.add(ms);
    for (const ms of m.unknownReconcileOwnMs ?? []) this.unknownOwn.add(ms);
    this.unknownHandedOver += m.unknownHandedOver ?? 0;
    this.unknownByHand += m.unknownByHand ?? 0;
    for (const [f, n] of Object.entries(s.faultsFired)) bump(this.faults, f, n ?? 0);
    for (const [st, n] of Object.entries(s.statesReached)) bump(this.states, st, n);
  }

  /** Failing series in seed order (the pool hands them over in completion order). */
  sortedFailing(): SeriesSummary[] {
    return [...this.failing].sort((a, b) => a.seed - b.seed);
  }
}

function bump(map: Map<string, number>, key: string, n: number): void {
  map.set(key, (map.get(key) ?? 0) + n);
}
