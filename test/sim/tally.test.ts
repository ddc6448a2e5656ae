import { describe, expect, it } from 'vitest';
import { NO_METRICS } from '../../src/sim/checks/metrics.js';
import { gateReport, gateReportOf } from '../../src/sim/gate.js';
import { runPool } from '../../src/sim/pool.js';
import { GateTally, KEPT_FAILURES, MsHistogram } from '../../src/sim/tally.js';
import type { SeriesSummary } from '../../src/sim/summary.js';

/** The nearest-rank p99 the gate computed on the sorted list before it streamed. */
function sortedP99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] as number;
}

describe('gate tally (streamed summaries)', () => {
  it('the millisecond histogram gives the exact nearest-rank quantile of the sorted list', () => {
    let x = 12345;
    const values: number[] = [];
    const h = new MsHistogram();
    for (let i = 0; i < 20_000; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      const ms = x % 97 === 0 ? 60_000 + (x % 9_000) : x % 5_000;
      values.push(ms);
      h.add(ms);
    }
    expect(h.count).toBe(values.length);
    expect(h.quantile(0.99)).toBe(sortedP99(values));
    expect(h.quantile(0.5)).toBe([...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.5) - 1]);
    expect(new MsHistogram().quantile(0.99)).toBe(0);
  });

  it('a run folded as it goes reports the same table as the held summaries, and the pool then holds none', async () => {
    const seeds = Array.from({ length: 24 }, (_, i) => i + 1);
    const held = await runPool({ seeds, workers: 1 });
    const tally = new GateTally();
    const streamed = await runPool({ seeds, workers: 2, collect: false, onSummary: (s) => tally.add(s) });
    expect(streamed).toEqual([]);
    expect(gateReportOf(tally, 0).rows).toEqual(gateReport(held, 0).rows);
  }, 300_000);

  it('keeps the first failing series whole and the rest by seed and invariant', () => {
    const failing = (seed: number): SeriesSummary => ({
      seed,
      wire: 'mcp-tasks-ext',
      plan: [],
      violations: [{ invariant: 'C1', detail: 'x' }],
      metrics: { ...NO_METRICS, operations: 1 },
      faultsFired: {},
      statesReached: {},
      traceDigest: '',
      virtualMs: 0,
    });
    const report = gateReport(
      Array.from({ length: KEPT_FAILURES + 7 }, (_, i) => failing(KEPT_FAILURES + 7 - i)),
      0,
    );
    expect(report.pass).toBe(false);
    expect(report.failing).toHaveLength(KEPT_FAILURES);
    expect(report.failing[0]!.seed).toBeLessThan(report.failing[1]!.seed);
    expect(report.moreFailing).toHaveLength(7);
    expect(report.moreFailing[0]).toEqual({ seed: 7, invariants: ['C1'], crashed: false });
    expect(report.rows.find((r) => r.figure === 'C1 violations')?.measured).toBe(`${KEPT_FAILURES + 7} series`);
  });
});
