/**
 * How `terminus ops` commands name an operation: its id, call node, task id or submission key
 * (C4: every doubt is findable by both), or an unambiguous prefix of any of them, as `git` and
 * `docker` take id prefixes.
 */
import type { Ledger } from '../executor/ledger-port.js';
import { LOCAL_STATES, type ToolOperation } from '../executor/operation.js';

/** Shorter prefixes match too much to be what someone meant (`op_` alone is 3). */
export const MIN_PREFIX = 4;
/** A ledger with more operations than this is searched by exact names only. */
const SCAN_LIMIT = 10_000;

export type Found =
  | { readonly kind: 'one'; readonly operation: ToolOperation }
  | { readonly kind: 'none' }
  /** A task id shared by operations on several servers, or a prefix of several names. */
  | { readonly kind: 'many'; readonly operations: readonly ToolOperation[]; readonly exact: boolean };

const names = (r: ToolOperation): string[] => [
  r.id,
  r.callNodeId,
  r.submissionKey,
  ...r.priorSubmissionKeys,
  ...(r.taskId === null ? [] : [r.taskId]),
];

export async function findOperation(ledger: Ledger, id: string): Promise<Found> {
  const direct = (await ledger.load(id)) ?? (await ledger.loadByCallNode(id)) ?? (await ledger.findBySubmissionKey(id));
  if (direct !== null) return { kind: 'one', operation: direct };
  const byTask = await ledger.findByTaskId(id);
  if (byTask.length === 1) return { kind: 'one', operation: byTask[0]! };
  if (byTask.length > 1) return { kind: 'many', operations: byTask, exact: true };
  if (id.length < MIN_PREFIX) return { kind: 'none' };
  const all = await ledger.listByState(LOCAL_STATES, SCAN_LIMIT);
  const matches = all.filter((r) => names(r).some((name) => name.startsWith(id)));
  if (matches.length === 1) return { kind: 'one', operation: matches[0]! };
  return matches.length === 0 ? { kind: 'none' } : { kind: 'many', operations: matches, exact: false };
}

/** The one-line error for a name that finds nothing or too much. */
export function notFoundMessage(command: string, id: string, found: Exclude<Found, { kind: 'one' }>): string {
  if (found.kind === 'none') {
    const short = id.length < MIN_PREFIX ? ` (prefixes need ${MIN_PREFIX} characters or more)` : '';
    return `${command}: no operation, call node, task or submission key ${id}${short}; terminus ops list --all shows them`;
  }
  const shown = found.operations.slice(0, 5).map((r) => `${r.id} (${r.tool.name}, ${r.state})`);
  const more = found.operations.length > 5 ? `, and ${found.operations.length - 5} more` : '';
  return `${command}: ${id} matches ${found.operations.length} operations: ${shown.join(', ')}${more}; give the full operation id`;
}
