/**
 * Push faults in the simulation (issue 17 item 2): the executor in every series listens on a
 * `subscriptions/listen` stream of the simulated server (on 2025-11-25, the session's GET stream,
 * which carries every task of the connection), whose notifications may be lost,
 * duplicated, reordered, late, or cut with the stream; the checkers still hold. Two broken
 * executors around streams are caught, naming the invariant they break.
 */
import { describe, expect, it } from 'vitest';
import { gateReport } from '../../src/sim/gate.js';
import { isScripted } from '../../src/sim/plan.js';
import { seriesRandom } from '../../src/sim/random.js';
import { SIM_TOOL_SLOW_POLL } from '../../src/sim/server/tools.js';
import { drawWorkload, withEdges } from '../../src/sim/workload.js';
import { PUSH_FAULT_CLASSES } from '../../src/sim/faults.js';
import { PUSH_BROKEN_VARIANTS } from '../../src/sim/push-variants.js';
import { runSeries } from '../../src/sim/series.js';
import { summarize, type SeriesSummary } from '../../src/sim/summary.js';
import { SIM_WIRES, simWire } from '../../src/sim/wires/index.js';

/** The wires whose executor listens (`pushes` in their spec). */
const PUSH_WIRES = SIM_WIRES.filter((wire) => simWire(wire).pushes !== undefined);

/** Seeds tried per variant before giving up (the liveness one is first caught at seed 37 today). */
const MAX_SEEDS = 80;

describe('push faults: the executor listens in the simulation and the checkers hold', () => {
  it.each(PUSH_WIRES)(
    '%s: 60 series with only push faults: every class fires, the streams carry pushes, no violation',
    async (wire) => {
      const summaries: SeriesSummary[] = [];
      let streams = 0;
      let cutReopened = 0;
      for (let seed = 1; seed <= 60; seed++) {
        const outcome = await runSeries({ seed, wire, faults: PUSH_FAULT_CLASSES, keepTrace: true });
        summaries.push(summarize(outcome));
        const push = outcome.trace.filter((e) => e.who === 'push').map((e) => e.what);
        const opened = push.filter((t) => t.includes(' open for ')).length;
        streams += opened;
        if (push.some((t) => t.endsWith('stream dropped')) && opened > 1) cutReopened++;
        expect(outcome.violations, `seed ${seed}: ${JSON.stringify(outcome.violations)}`).toEqual([]);
      }
      const fired = new Map<string, number>();
      for (const s of summaries)
        for (const [f, n] of Object.entries(s.faultsFired)) fired.set(f, (fired.get(f) ?? 0) + (n ?? 0));
      for (const f of PUSH_FAULT_CLASSES) expect(fired.get(f) ?? 0, f).toBeGreaterThan(0);
      expect(streams).toBeGreaterThan(60);
      // A cut stream is opened again (the listener's back-off), not given up.
      expect(cutReopened).toBeGreaterThan(0);
      expect(gateReport(summaries, 0).pass).toBe(true);
    },
    300_000,
  );

  it('defect 7 listening: a cancel on the 30 s poll-interval tool is confirmed in seconds when it comes before the end', async () => {
    // Fault-free series whose only cancel is on the slow-polling tool (as test/sim/edges.test.ts picks them).
    const seeds = Array.from({ length: 400 }, (_, i) => i + 1).filter((seed) => {
      if (isScripted(seed)) return false;
      const ops = drawWorkload(seriesRandom(seed).workload, seed);
      const cancels = withEdges(ops, seed, new Set()).filter((op) => op.cancelAfter !== null || op.raceCancel);
      return cancels.length === 1 && cancels[0]!.tool === SIM_TOOL_SLOW_POLL;
    });
    let confirmed = 0;
    for (const seed of seeds.slice(0, 8)) {
      const outcome = await runSeries({ seed, faults: [] });
      expect(outcome.violations, `seed ${seed}`).toEqual([]);
      // A completion pushed before the cancel settles the call first: then there is nothing to confirm.
      confirmed += outcome.metrics.cancelConfirmMs.length;
      for (const ms of outcome.metrics.cancelConfirmMs) expect(ms, `seed ${seed}`).toBeLessThan(5_000);
    }
    expect(confirmed).toBeGreaterThan(0);
  }, 300_000);

  for (const variant of PUSH_BROKEN_VARIANTS) {
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
      expect(report.rows.find((r) => r.figure === `${variant.breaks} violations`)?.pass).toBe(false);
      // The same seed with the real executor does not break that invariant: the hook is what broke it.
      const real = await runSeries({ seed: caught as number, faults: variant.faults });
      expect(real.violations.filter((v) => v.invariant === variant.breaks)).toEqual([]);
    }, 300_000);
  }
});
