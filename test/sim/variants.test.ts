import { describe, expect, it } from 'vitest';
import { gateReport } from '../../src/sim/gate.js';
import { runSeries } from '../../src/sim/series.js';
import { summarize, type SeriesSummary } from '../../src/sim/summary.js';
import { BROKEN_VARIANTS } from '../../src/sim/variants.js';

/** Seeds tried per variant before giving up; each variant is caught well within this many. */
const MAX_SEEDS = 40;

describe('the gate catches deliberately broken variants', () => {
  for (const variant of BROKEN_VARIANTS) {
    it(`${variant.name} fails the gate on ${variant.breaks}`, async () => {
      const broken: SeriesSummary[] = [];
      let caught: number | null = null;
      for (let seed = 1; seed <= MAX_SEEDS && caught === null; seed++) {
        const summary = summarize(await runSeries({ seed, faults: variant.faults, hooks: variant.hooks }));
        broken.push(summary);
        if (summary.violations.some((v) => v.invariant === variant.breaks)) caught = seed;
      }
      expect(caught, `${variant.name} was never caught`).not.toBeNull();
      const report = gateReport(broken, 0);
      expect(report.pass).toBe(false);
      const row = report.rows.find((r) => r.figure === `${variant.breaks} violations`);
      expect(row?.pass).toBe(false);
      // The same seed with the real code does not break that invariant: the hook is what broke it.
      const real = await runSeries({ seed: caught as number, faults: variant.faults });
      expect(real.violations.filter((v) => v.invariant === variant.breaks)).toEqual([]);
    }, 300_000);
  }
});
