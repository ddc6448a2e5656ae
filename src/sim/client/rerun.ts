/**
 * The CLI's re-run by arguments as a series behaviour (issue 17 item 4): `terminus call` run twice
 * with the same server, tool and arguments derives the same call node, attaches to the operation
 * while it is in flight (C5: never a second submission) and starts the next generation once it has
 * settled. The simulated caller chooses its node with the CLI's own `chooseCallNode` on the same
 * ledger the executor writes.
 */
import { chooseCallNode, derivedCallNode } from '../../executor/call-node.js';
import type { Ledger } from '../../executor/ledger-port.js';
import { IN_FLIGHT_STATES } from '../../executor/transitions.js';
import type { LocalState } from '../../executor/operation.js';
import type { Violation } from '../checks/invariants.js';
import { SIM_SERVER, type OperationPlan } from '../workload.js';

/** The call node the command derives (the simulation's `op` tag is not part of the command). */
export function commandNode(op: OperationPlan): string {
  const { op: _tag, ...command } = op.args;
  return derivedCallNode(SIM_SERVER, op.tool, command);
}

/**
 * The command run again: what `chooseCallNode` picks must match the ledger (attach while in flight,
 * the next generation once settled, the first one before anything was recorded). Returns the node
 * to submit to (an attach), or null (nothing to submit here: a next generation is a new operation,
 * outside this series), and the violation when the choice is wrong.
 */
export async function rerun(
  ledger: Ledger,
  op: OperationPlan,
): Promise<{ submit: string | null; violation?: Violation }> {
  const base = commandNode(op);
  const record = await ledger.loadByCallNode(base);
  const choice = await chooseCallNode(ledger, base, false);
  const wrong = (want: string): { submit: null; violation: Violation } => ({
    submit: null,
    violation: {
      invariant: 'C5',
      detail: `${op.callNodeId}: re-run by arguments chose ${choice.kind} ${choice.callNodeId}, wanted ${want} (ledger: ${record?.state ?? 'nothing'})`,
    },
  });
  if (record === null)
    return choice.kind === 'first' && choice.callNodeId === base ? { submit: base } : wrong(`first ${base}`);
  if ((IN_FLIGHT_STATES as readonly LocalState[]).includes(record.state)) {
    return choice.kind === 'attach' && choice.callNodeId === base ? { submit: base } : wrong(`attach ${base}`);
  }
  return choice.kind === 'new' && choice.callNodeId === `${base}.2` ? { submit: null } : wrong(`new ${base}.2`);
}
