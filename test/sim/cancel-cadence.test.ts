/**
 * The cancel cadence checker (issue 17 item 4): while a cancel is being confirmed the executor reads
 * on its own short cadence, whatever interval the server suggests. Fault-free series whose cancel is
 * on the 30 s poll-interval tool pass it with the real executor, and fail it, naming it, with an
 * executor whose confirming reads follow the server's interval.
 */
import { describe, expect, it } from 'vitest';
import { next as realNext, type NextFn } from '../../src/executor/machine.js';
import { isScripted, swarmPlan } from '../../src/sim/plan.js';
import { seriesRandom } from '../../src/sim/random.js';
import { runSeries } from '../../src/sim/series.js';
import { SIM_TOOL_SLOW_POLL } from '../../src/sim/server/tools.js';
import { drawWorkload, withEdges } from '../../src/sim/workload.js';

/** Fault-free seeds whose only cancel is on the slow-polling tool. */
function slowCancelSeeds(count: number): number[] {
  const out: number[] = [];
  for (let seed = 1; out.length < count && seed < 2_000; seed++) {
    if (isScripted(seed)) continue;
    const random = seriesRandom(seed);
    const drawn = drawWorkload(random.workload, seed);
    swarmPlan(drawn, random.faults, []);
    const cancels = withEdges(drawn, seed, new Set()).filter((op) => op.cancelAfter !== null || op.raceCancel);
    if (cancels.length === 1 && cancels[0]!.tool === SIM_TOOL_SLOW_POLL) out.push(seed);
  }
  return out;
}

/** Confirms a cancel at the server's poll interval (30 s here), as the executor did before defect 7. */
const followServerInterval: NextFn = (record, event, now, random) => {
  const step = realNext(record, event, now, random);
  if (step.outcome !== 'applied' || step.record.state !== 'CANCEL_REQUESTED') return step;
  const poll = step.effects.find((e) => e.type === 'schedule_wake' && e.purpose === 'poll');
  const interval = step.record.pollIntervalMs;
  if (poll === undefined || interval === null) return step;
  const atMs = now + interval;
  return {
    ...step,
    record: { ...step.record, wakeAt: atMs },
    effects: step.effects.map((e) => (e === poll ? { type: 'schedule_wake', atMs, purpose: 'poll' } : e)),
  };
};

describe('cancel cadence checker', () => {
  const seeds = slowCancelSeeds(4);

  it('the real executor confirms a cancel on its own cadence under a 30 s server interval', async () => {
    expect(seeds.length).toBe(4);
    for (const seed of seeds) {
      const outcome = await runSeries({ seed, faults: [] });
      expect(outcome.violations, `seed ${seed}`).toEqual([]);
    }
  }, 300_000);

  it('an executor that confirms at the server interval fails it, naming the cadence', async () => {
    let caught = 0;
    for (const seed of seeds) {
      const outcome = await runSeries({ seed, faults: [], hooks: { next: followServerInterval } });
      if (outcome.violations.some((v) => v.invariant === 'cancel cadence')) caught++;
    }
    expect(caught).toBeGreaterThan(0);
  }, 300_000);
});
