/** How a series is fitted to its wire: the fault classes that apply, and the workload it can carry. */
import { commandNode } from '../client/rerun.js';
import type { FaultClass } from '../faults.js';
import type { OperationPlan } from '../workload.js';
import type { SimWire } from './wire.js';

/** `wanted` less the classes that cannot apply to the wire (`notApplicable`, reported by the gate). */
export function applicableFaults(wire: SimWire, wanted: readonly FaultClass[]): FaultClass[] {
  return wanted.filter((f) => wire.notApplicable[f] === undefined);
}

/**
 * The same drawn workload, less what the wire's client cannot do: without input rounds no call
 * asks for input (the draw is made and then dropped, so every other draw stays as it was).
 */
export function forWire(wire: SimWire, ops: OperationPlan[]): OperationPlan[] {
  if (wire.inputRounds) return ops;
  return ops.map((op) => {
    if (!op.args.ask) return op;
    const args = { ...op.args, ask: false };
    if (op.rerun == null) return { ...op, args };
    // An operation run as `terminus call` has the node its command derives, arguments included:
    // derived again from the ones it now runs with. Kept from before `ask` was dropped, the re-run's
    // command derived another node and started a second operation under the first one's `op` tag,
    // which the checkers rightly counted as a second server task (C5) on SEP-1391 and AIP-151.
    const callNodeId = commandNode({ ...op, args });
    return { ...op, callNodeId, args: { ...args, op: callNodeId } };
  });
}
