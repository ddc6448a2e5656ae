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

  /** `[ms, count]` pairs, for a checkpoint; `MsHistogram.of` rebuilds the same histogram. */
  entries(): [number, number][] {
    return [...this.#counts];
  }

  static of(entries: readonly (readonly [number, number])[]): MsHistogram {
    const h = new MsHistogram();
    for (const [ms, n] of entries) {
      h.#counts.set(ms, (h.#counts.get(ms) ?? 0) + n);
      h.#n += n;
    }
    return h;
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
  cancel = new MsHistogram();
  cancelOwn = new MsHistogram();
  unknown = new MsHistogram();
  /** UNKNOWN stretches with a hand-over to an operator timed to the hand-over (`unknownReconcileOwnMs`). */
  unknownOwn = new MsHistogram();
  unknownHandedOver = 0;
  /** Operations left for an operator because the server contradicted itself (C13). */
  contradictions = 0;
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
    this.contradictions += m.contradictions ?? 0;
    for (const [f, n] of Object.entries(s.faultsFired)) bump(this.faults, f, n ?? 0);
    for (const [st, n] of Object.entries(s.statesReached)) bump(this.states, st, n);
  }

  /** Everything folded so far as plain JSON data (a checkpoint); `GateTally.restore` reads it back. */
  snapshot(): TallySnapshot {
    return {
      counts: Object.fromEntries(COUNTS.map((k) => [k, this[k]])) as Record<TallyCount, number>,
      histograms: Object.fromEntries(HISTOGRAMS.map((k) => [k, this[k].entries()])) as Record<
        TallyHistogram,
        [number, number][]
      >,
      byInvariant: [...this.byInvariant],
      faults: [...this.faults],
      states: [...this.states],
      failing: [...this.failing],
      moreFailing: [...this.moreFailing],
    };
  }

  static restore(snapshot: TallySnapshot): GateTally {
    const tally = new GateTally();
    for (const k of COUNTS) tally[k] = snapshot.counts[k];
    for (const k of HISTOGRAMS) tally[k] = MsHistogram.of(snapshot.histograms[k]);
    for (const [k, n] of snapshot.byInvariant) tally.byInvariant.set(k, n);
    for (const [k, n] of snapshot.faults) tally.faults.set(k, n);
    for (const [k, n] of snapshot.states) tally.states.set(k, n);
    tally.failing.push(...snapshot.failing);
    tally.moreFailing.push(...snapshot.moreFailing);
    return tally;
  }

  /** Failing series in seed order (the pool hands them over in completion order). */
  sortedFailing(): SeriesSummary[] {
    return [...this.failing].sort((a, b) => a.seed - b.seed);
  }
}

/** The plain numbers of a tally and its histograms, by name (what a snapshot carries). */
export const COUNTS = [
  'series',
  'divergences',
  'secondOperations',
  'duplicateSubmissions',
  'polls',
  'idealPolls',
  'peakPollsPerSecond',
  'outboxRows',
  'outboxTraced',
  'unknownByHand',
  'unknownHandedOver',
  'contradictions',
] as const;
export const HISTOGRAMS = ['cancel', 'cancelOwn', 'unknown', 'unknownOwn'] as const;
export type TallyCount = (typeof COUNTS)[number];
export type TallyHistogram = (typeof HISTOGRAMS)[number];

export interface TallySnapshot {
  readonly counts: Readonly<Record<TallyCount, number>>;
  readonly histograms: Readonly<Record<TallyHistogram, readonly (readonly [number, number])[]>>;
  readonly byInvariant: readonly (readonly [string, number])[];
  readonly faults: readonly (readonly [string, number])[];
  readonly states: readonly (readonly [string, number])[];
  readonly failing: readonly SeriesSummary[];
  readonly moreFailing: readonly FailingSeed[];
}

function bump(map: Map<string, number>, key: string, n: number): void {
  map.set(key, (map.get(key) ?? 0) + n);
}
