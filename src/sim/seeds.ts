/**
 * The seeds a run has left, in little memory however many: a range less the seeds a checkpoint
 * holds as done. A million seeds as an array cost 8 MB in the main thread and again in the workers;
 * `--series 100000000` held 1.5 GB before a series ran.
 */

/** Seeds `first` .. `first + count - 1`, but those in `done`. */
export interface SeedRange {
  readonly first: number;
  readonly count: number;
  /** Seeds done already (a checkpoint's `DoneSeeds`): every one below `below`, and those in `above`. */
  readonly done?: { readonly below: number; readonly above: readonly number[] };
}

export type Seeds = readonly number[] | SeedRange;

/** Share `share` of `shares` of the seeds: every `shares`-th left, from the `share`-th on. */
export function* seedsOf(seeds: Seeds, share = 0, shares = 1): Generator<number> {
  let index = 0;
  for (const seed of all(seeds)) {
    if (index++ % shares === share) yield seed;
  }
}

/** How many seeds are left. */
export function seedCount(seeds: Seeds): number {
  if (isList(seeds)) return seeds.length;
  const end = seeds.first + seeds.count;
  const done = seeds.done;
  if (done === undefined) return seeds.count;
  const below = Math.max(0, Math.min(done.below, end) - seeds.first);
  const above = done.above.filter((s) => s >= done.below && s >= seeds.first && s < end).length;
  return seeds.count - below - above;
}

function* all(seeds: Seeds): Generator<number> {
  if (isList(seeds)) {
    yield* seeds;
    return;
  }
  const above = new Set(seeds.done?.above);
  const below = seeds.done?.below ?? seeds.first;
  for (let seed = Math.max(seeds.first, below); seed < seeds.first + seeds.count; seed++) {
    if (!above.has(seed)) yield seed;
  }
}

function isList(seeds: Seeds): seeds is readonly number[] {
  return Array.isArray(seeds);
}
