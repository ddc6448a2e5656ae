/**
 * The gate cases issue 11 added (C11, C12, defect 7), on virtual time: series whose workload has a
 * waiter that gives up and a later one that attaches, a tool the server answers synchronously, and
 * a 30 s server poll interval with a cancel. The workload and plan are derived here exactly as
 * `runSeries` derives them, so each assertion is about an operation known to carry the case.
 */
import { describe, expect, it } from 'vitest';
import { FAULT_CLASSES, type FaultClass } from '../../src/sim/faults.js';
import { isScripted, swarmPlan } from '../../src/sim/plan.js';
import { seriesRandom } from '../../src/sim/random.js';
import { runSeries } from '../../src/sim/series.js';
import { SIM_TOOL_INLINE, SIM_TOOL_SLOW_POLL } from '../../src/sim/server/tools.js';
import { drawWorkload, withEdges, type OperationPlan } from '../../src/sim/workload.js';

function planned(
  seed: number,
  faults: readonly FaultClass[] = FAULT_CLASSES,
): { ops: OperationPlan[]; process: number; ruled: Set<string> } {
  const random = seriesRandom(seed);
  const drawn = drawWorkload(random.workload, seed);
  const plan = swarmPlan(drawn, random.faults, faults);
  const partitioned = plan.rules.filter((r) => r.fault === 'not_found_after_expiry').map((r) => r.op ?? '');
  return {
    ops: withEdges(drawn, seed, new Set(partitioned)),
    process: plan.process.length,
    ruled: new Set(plan.rules.map((r) => r.op ?? '*')),
  };
}

const SEEDS = Array.from({ length: 400 }, (_, i) => i + 1).filter((s) => !isScripted(s));

describe('gate edges (issue 11)', () => {
  it('C11: a waiter that gave up is followed by one that attaches and reaches the end', async () => {
    const seeds = SEEDS.filter((s) => planned(s).ops.some((op) => op.giveUp != null)).slice(0, 12);
    expect(seeds.length).toBeGreaterThan(5);
    for (const seed of seeds) {
      // A budget that ran out before the task ended leaves the operation WORKING until the later
      // waiter attaches: the C11 and liveness checkers fail the series if that waiter does not finish it.
      const outcome = await runSeries({ seed });
      expect(outcome.violations, `seed ${seed}`).toEqual([]);
    }
  }, 300_000);

  it('C12: calls the server answers synchronously pass every checker', async () => {
    const seeds = SEEDS.filter((s) => planned(s).ops.some((op) => op.tool === SIM_TOOL_INLINE)).slice(0, 12);
    expect(seeds.length).toBeGreaterThan(5);
    for (const seed of seeds) {
      // The C12 checker: an answer delivered synchronously is the node's immediate completed receipt.
      const outcome = await runSeries({ seed });
      expect(outcome.violations, `seed ${seed}`).toEqual([]);
    }
  }, 300_000);

  it('defect 7: a cancel under a 30 s server poll interval is confirmed in seconds, not 30 s', async () => {
    // Fault-free series (no fault class enabled) whose only cancel is on the slow-polling tool.
    const seeds = SEEDS.filter((s) => {
      const cancels = planned(s, []).ops.filter((op) => op.cancelAfter !== null || op.raceCancel);
      return cancels.length === 1 && cancels[0]!.tool === SIM_TOOL_SLOW_POLL;
    });
    expect(seeds.length).toBeGreaterThan(2);
    for (const seed of seeds.slice(0, 8)) {
      // Polling only: a push of the completion would settle the call before its cancel (the case
      // here is the cancel cadence under a 30 s poll interval; test/sim/push.test.ts has it listening).
      const outcome = await runSeries({ seed, faults: [], listen: false });
      expect(outcome.metrics.cancelConfirmMs, `seed ${seed}`).toHaveLength(1);
      expect(outcome.violations, `seed ${seed}`).toEqual([]);
      for (const ms of outcome.metrics.cancelConfirmMs) expect(ms, `seed ${seed}`).toBeLessThan(5_000);
    }
  }, 300_000);
});
