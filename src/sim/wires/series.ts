/** How a series is fitted to its wire: the fault classes that apply, and the workload it can carry. */
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
  return ops.map((op) => (op.args.ask ? { ...op, args: { ...op.args, ask: false } } : op));
}
