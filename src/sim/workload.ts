/**
 * The workload of one series: a few tool calls with varied durations, inputs, failures, cancels and
 * disconnects, all drawn from the `workload` stream.
 */
import type { SimRandom } from './random.js';
import { SIM_TOOL, SIM_TOOL_SHORT_TTL, type SimArgs } from './server/tools.js';

export interface OperationPlan {
  readonly callNodeId: string;
  readonly tool: string;
  readonly args: SimArgs;
  /** Virtual ms from the series start. */
  readonly startAt: number;
  /** Ms after the start the caller asks to cancel; null = never. */
  cancelAfter: number | null;
  /** The caller goes away (C9) at `at` and comes back after `for` ms; null = never. */
  readonly disconnect: { readonly after: number; readonly for: number } | null;
  /** Cancel exactly when the handler completes (fault `cancel_complete_race`). */
  raceCancel: boolean;
}

export function drawWorkload(random: SimRandom, seed: number): OperationPlan[] {
  const count = random.int(2, 4);
  const ops: OperationPlan[] = [];
  for (let i = 0; i < count; i++) {
    const op = `s${seed}-op${i}`;
    const steps = random.int(1, 5);
    ops.push({
      callNodeId: op,
      tool: random.chance(0.15) ? SIM_TOOL_SHORT_TTL : SIM_TOOL,
      args: {
        op,
        steps,
        stepMs: random.int(100, 2_500),
        ask: random.chance(0.25),
        fail: random.chance(0.15),
        size: random.pick([8, 64, 512, 4_096]),
      },
      startAt: random.int(0, 3_000),
      cancelAfter: random.chance(0.25) ? random.int(200, 8_000) : null,
      disconnect: random.chance(0.1) ? { after: random.int(500, 6_000), for: random.int(1_000, 20_000) } : null,
      raceCancel: false,
    });
  }
  return ops;
}
