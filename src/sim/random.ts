/**
 * One seeded random source per series, split into named sub-streams so that drawing more numbers
 * in one concern (say, a new network fault) does not shift every draw of another (the workload).
 *
 * Generator: sfc32 (Chris Doty-Humphrey's Small Fast Counter, 128-bit state, passes PractRand to
 * 2^40+ bytes), seeded through splitmix32 from `(seed, streamName)`. Pure 32-bit integer arithmetic,
 * so the sequence is the same on every platform and Node version.
 */
import type { Random } from '../core/ports.js';

export const STREAMS = ['network', 'server', 'client', 'workload', 'faults'] as const;
export type StreamName = (typeof STREAMS)[number];

/** A uniform source with the small helpers the simulation needs. */
export interface SimRandom extends Random {
  /** Uniform integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** 32 random bits. */
  u32(): number;
}

function splitmix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** FNV-1a of a string: turns a stream name into seed material. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h >>> 0;
}

/** An sfc32 generator from a 32-bit seed and a name (two different names never share a sequence). */
export function sfc32(seed: number, name: string): SimRandom {
  const mix = splitmix32((seed ^ fnv1a(name)) >>> 0);
  let a = mix();
  let b = mix();
  let c = mix();
  let d = 1;
  const u32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  // Discard the first outputs: sfc32 mixes its seed in over ~12 rounds.
  for (let i = 0; i < 12; i++) u32();
  const next = (): number => u32() / 4_294_967_296;
  return {
    next,
    u32,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError('pick from an empty list');
      return items[Math.floor(next() * items.length)] as T;
    },
  };
}

/** The random sub-streams of one series. */
export type SeriesRandom = Readonly<Record<StreamName, SimRandom>>;

export function seriesRandom(seed: number): SeriesRandom {
  const out = {} as Record<StreamName, SimRandom>;
  for (const name of STREAMS) out[name] = sfc32(seed, name);
  return out;
}
