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
  // Re-runs by arguments (`terminus call` run again) only where the network tells a re-run's next
  // generation from the first: on SEP-1391 and AIP-151 it maps both to the first node (by the
  // arguments' `op` tag), which the checkers count as a second task (C5). Not yet separated.
  const reruns = wire.name === 'mcp-tasks-ext' || wire.name === 'mcp-2025-11-25';
  return ops.map((op) => {
    let out = op;
    if (!wire.inputRounds && out.args.ask) out = { ...out, args: { ...out.args, ask: false } };
    if (!reruns && out.rerun != null) out = { ...out, rerun: null };
    return out;
  });
}
