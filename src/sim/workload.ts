/**
 * The workload of one series: a few tool calls with varied durations, inputs, failures, cancels and
 * disconnects, all drawn from the `workload` stream.
 */
import type { SimRandom } from './random.js';
import { sfc32 } from './random.js';
import { derivedCallNode } from '../executor/call-node.js';
import { SIM_TOOL, SIM_TOOL_INLINE, SIM_TOOL_SHORT_TTL, SIM_TOOL_SLOW_POLL, type SimArgs } from './server/tools.js';

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
  /**
   * C11: the first waiter submits with a budget of `budgetMs` and gives up when it ends; a later
   * waiter attaches `resumeAfter` ms after the start with a fresh (unbounded) budget. Null = never.
   */
  giveUp?: { readonly budgetMs: number; readonly resumeAfter: number } | null;
  /**
   * The CLI's re-run by arguments (issue 17 item 4): the call node is derived from the command as
   * `terminus call` derives it (`chooseCallNode`), and the same command is run again `after` ms
   * after the start (while in flight it must attach) and once more when the series has settled
   * (it must then start the next generation). Null = never.
   */
  rerun?: { readonly after: number } | null;
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

/**
 * The cases issue 11 showed the gate lacked, drawn from a stream of their own (the draws above stay
 * as they were): a waiter that gives up on its budget and a later one that attaches (C11), a tool the
 * server answers synchronously (C12), and a 30 s server poll interval, half the time with a cancel
 * (its confirmation must not wait for that interval). Applied after the fault plan was drawn, so the
 * earlier draws stay as they were; `keep` names the operations left as they are (an expiry
 * partition's target: its task is meant to be purged while the client is cut off).
 */
export function withEdges(ops: OperationPlan[], seed: number, keep: ReadonlySet<string>): OperationPlan[] {
  const r = sfc32(seed, 'edges');
  return ops.map((op) => {
    if (keep.has(op.callNodeId)) return op;
    const kind = r.int(0, 99);
    if (kind < 8) {
      // One short step: a synchronous answer must come back within the 2 s request timeout of the
      // simulated transport (a longer one was always lost, so no synchronous answer was ever made).
      const args = { ...op.args, ask: false, steps: 1, stepMs: Math.min(op.args.stepMs, 400) };
      return { ...op, tool: SIM_TOOL_INLINE, args };
    }
    if (kind < 16) {
      return { ...op, tool: SIM_TOOL_SLOW_POLL, cancelAfter: r.chance(0.5) ? r.int(200, 8_000) : op.cancelAfter };
    }
    if (kind < 26) return { ...op, giveUp: { budgetMs: r.int(300, 4_000), resumeAfter: r.int(1_000, 20_000) } };
    if (kind < 34) return asCommand(op, sfc32(seed, `rerun ${op.callNodeId}`));
    return op;
  });
}

/** The server name the simulated `terminus call` runs against (part of the derived call node). */
export const SIM_SERVER = 'sim';

/**
 * An operation run as `terminus call` runs it: its call node is the command's derived one (the
 * arguments without the simulation's `op` tag, which is then set to that node so the checkers and
 * the network still map one operation to one node), re-run while in flight and after it settled.
 */
function asCommand(op: OperationPlan, r: SimRandom): OperationPlan {
  const { op: _tag, ...command } = op.args;
  const callNodeId = derivedCallNode(SIM_SERVER, op.tool, command);
  return {
    ...op,
    callNodeId,
    args: { ...op.args, op: callNodeId },
    rerun: { after: r.int(100, 6_000) },
  };
}
