/** Order statistics for the harness: medians and ranges across rounds, percentiles within one. */

export interface Summary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

/** Median, min and max of the finite values; NaN everywhere when there are none. */
export function summarize(values: readonly number[]): Summary {
  const xs = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (xs.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  const mid = Math.floor(xs.length / 2);
  const median = xs.length % 2 === 1 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
  return { median, min: xs[0]!, max: xs[xs.length - 1]!, n: xs.length };
}

/** Nearest-rank percentile (p in 0..100) of a sample; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  const xs = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (xs.length === 0) return NaN;
  const rank = Math.min(xs.length, Math.max(1, Math.ceil((p / 100) * xs.length)));
  return xs[rank - 1]!;
}

export function mean(values: readonly number[]): number {
  const xs = values.filter(Number.isFinite);
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** A seeded PRNG (mulberry32), so every variant sees the same workload. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Lognormal draw (Box-Muller) with the given median and sigma of the underlying normal. */
export function lognormal(random: () => number, medianMs: number, sigma: number): number {
  const u = Math.max(random(), 1e-12);
  const v = random();
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  return medianMs * Math.exp(sigma * z);
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on one host. */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}
