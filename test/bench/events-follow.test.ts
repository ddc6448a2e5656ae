/**
 * Structural smoke test of `bench/events-follow.ts` (issue 32): one short task followed by status
 * reads, by events, and by events across a broken stream, against a real server. Counts, never
 * timings (C6: the events path reads as often as the status path, the result once).
 */
import { describe, expect, it } from 'vitest';
import { followCounts } from '../../bench/events-follow.js';

const EVENTS = 'terminus/tasks/events';

describe('bench: requests to follow one task, status reads against events', () => {
  it('each mode completes; events reads replace every status read but the result fetch', async () => {
    const counts = await followCounts({ seconds: 1, intervalMs: 250 });
    expect(counts.map((c) => [c.mode, c.status])).toEqual([
      ['status', 'completed'],
      ['events', 'completed'],
      ['events+break', 'completed'],
    ]);
    const [status, events, broken] = counts as [(typeof counts)[0], (typeof counts)[0], (typeof counts)[0]];
    expect(status.methods[EVENTS] ?? 0).toBe(0);
    expect(status.methods['tasks/get']).toBeGreaterThanOrEqual(2);
    for (const c of [events, broken]) {
      expect(c.methods['tasks/get'], c.mode).toBe(1);
      expect(c.methods[EVENTS], c.mode).toBeGreaterThanOrEqual(2);
    }
  }, 60_000);
});
