/**
 * Keeps bench/identity-floods.ts from rotting: a tiny run produces every phase with finite numbers
 * and the answers the floods must get (alice's sessions capped at her share with 429, junk page
 * tokens 400, bob's own session opened during the flood). Timings are never asserted: this machine
 * is shared and noisy. Runs the built CLI (`npm run build` first).
 */
import { describe, expect, it } from 'vitest';
import { renderFloods, runIdentityFloods } from '../../bench/identity-floods.js';

describe('bench/identity-floods.ts', () => {
  it('measures bob in each phase and reports what the floods were answered', { timeout: 120_000 }, async () => {
    const report = await runIdentityFloods({ rounds: 1, gets: 20, concurrency: 2 });
    expect(report.phases.map((p) => p.phase)).toEqual(['idle', 'session', 'page_token']);
    for (const phase of report.phases) {
      expect(phase.p99Ms).toHaveLength(1);
      expect(Number.isFinite(phase.p99Ms[0])).toBe(true);
      expect(Number.isFinite(phase.ratio[0])).toBe(true);
    }
    const session = report.phases[1]!.answers;
    // alice opens at most her share (100 by default) and is refused 429 after; nothing else.
    expect(Object.keys(session).every((status) => status === '200' || status === '429')).toBe(true);
    expect(session['200'] ?? 0).toBeLessThanOrEqual(100);
    expect(Object.keys(report.phases[2]!.answers)).toEqual(['400']);
    expect(report.bobSessionStatus).toEqual([200]);
    const table = renderFloods(report);
    expect(table).toContain('| session flood (alice) |');
    expect(table).toMatch(/load average \d/);
  });
});
