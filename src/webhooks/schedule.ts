import type { Random } from '../core/ports.js';

/**
 * Waits between attempts (ms): after a first attempt at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 10 h: 8 attempts over 27 h 35 min, past the 24 h a receiver down for a day needs (the schedule
 * Standard Webhooks senders commonly use). Each wait is jittered by +-10%, so receivers that came
 * back are not hit by every sender's retries in the same second, and even the shortest draw of
 * every wait still retries past 24 h (24 h 49 min).
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
];

/** The fraction a wait may be shortened or lengthened by. */
const JITTER = 0.1;

/** The wait after failed attempt `attempts` (1-based), or null when the schedule ran out (the row is dead). */
export function retryDelay(schedule: readonly number[], attempts: number, random: Random): number | null {
  const base = schedule[attempts - 1];
  if (base === undefined) return null;
  return Math.max(0, Math.round(base * (1 - JITTER + 2 * JITTER * random.next())));
}

/** Parses `5s,5m,30m,2h` (or plain milliseconds) for `--webhook-retry`. */
export function parseSchedule(text: string): number[] {
  return text.split(',').map((part) => parseDuration(part, 'retry schedule entry'));
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** One duration: `250ms`, `30s`, `5m`, `2h`, `7d` or plain milliseconds; RangeError naming `what` otherwise. */
export function parseDuration(text: string, what = 'duration'): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (match === null) {
    throw new RangeError(`${what} ${JSON.stringify(text)} is not a duration (250ms, 30s, 5m, 2h, 7d)`);
  }
  return Math.round(Number(match[1]) * (UNITS[match[2] ?? 'ms'] ?? 1));
}
