/**
 * Structural smoke test of figure 4's poll-cost rows (issue 32): the adaptive interval against a
 * fixed one for short, medium and long tasks. Counts from a model client, never timings.
 */
import { describe, expect, it } from 'vitest';
import { adaptiveAt, pollCost, pollCostRows, POLL_COST_TASKS } from '../../bench/figures/poll-cost.js';

describe('figure 4: poll cost per task, adaptive against fixed', () => {
  it('has a finite row per task length and variant', () => {
    const rows = pollCostRows();
    expect(rows).toHaveLength(POLL_COST_TASKS.length * 3 * 2);
    for (const row of rows) {
      expect(row.figure).toBe(4);
      expect(Number.isFinite(row.value!.median), `${row.metric} ${row.variant} ${row.setting}`).toBe(true);
      if (row.ratio !== undefined) expect(Number.isFinite(row.ratio.value)).toBe(true);
    }
  });

  it('C6 never asks for more polls than the fixed floor, and far fewer for long work', () => {
    for (const { ms } of POLL_COST_TASKS) {
      const fixed = pollCost(ms, () => 1_000).polls;
      expect(pollCost(ms, adaptiveAt(ms)).polls).toBeLessThanOrEqual(fixed);
      expect(pollCost(ms, adaptiveAt(null)).polls).toBeLessThanOrEqual(fixed);
    }
    const long = POLL_COST_TASKS.at(-1)!.ms;
    expect(pollCost(long, adaptiveAt(long)).polls * 10).toBeLessThan(pollCost(long, () => 1_000).polls);
  });
});
