/**
 * The seeds a gate run has left (`src/sim/seeds.ts`), handed to the workers as a range: the same
 * seeds, in the same shares, as the array they replace, and the pool listens once on its signal
 * however many workers it starts.
 */
import { describe, expect, it, vi } from 'vitest';
import { runPool } from '../../src/sim/pool.js';
import { seedCount, seedsOf, type SeedRange } from '../../src/sim/seeds.js';

describe('seeds left to run', () => {
  it('a range less the seeds done gives the seeds, the shares and the count of the array it replaces', () => {
    const done = { below: 105, above: [107, 110, 119, 140] };
    const range: SeedRange = { first: 100, count: 20, done };
    const list = Array.from({ length: 20 }, (_, i) => 100 + i).filter(
      (s) => s >= done.below && !done.above.includes(s),
    );
    expect([...seedsOf(range)]).toEqual(list);
    expect(seedCount(range)).toBe(list.length);
    for (let share = 0; share < 3; share++) {
      expect([...seedsOf(range, share, 3)]).toEqual(list.filter((_, j) => j % 3 === share));
      expect([...seedsOf(list, share, 3)]).toEqual(list.filter((_, j) => j % 3 === share));
    }
    expect(seedCount({ first: 1, count: 1e9 })).toBe(1e9);
    expect(seedCount({ first: 1, count: 10, done: { below: 50, above: [] } })).toBe(0);
    expect([...seedsOf({ first: 1, count: 10, done: { below: 50, above: [] } })]).toEqual([]);
  });

  it('the pool listens once on its signal for all its workers, and an abort ends them all', async () => {
    const stop = new AbortController();
    const listen = vi.spyOn(stop.signal, 'addEventListener');
    let ran = 0;
    await runPool({
      seeds: { first: 1, count: 3 },
      workers: 3,
      collect: false,
      signal: stop.signal,
      onSummary: () => {
        ran++;
        stop.abort();
      },
    });
    expect(listen).toHaveBeenCalledTimes(1);
    expect(ran).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
