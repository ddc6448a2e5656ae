/** Status reads: the most in any window (the C6 cap), and a clean operation's reads against the ideal. */
import type { TaskRecord } from '../../core/task.js';
import { DEFAULT_POLICY, type ToolOperation } from '../../executor/operation.js';
import type { WireEvent } from '../network/wire-log.js';
import type { OperationPlan } from '../workload.js';
import type { CheckInput } from './input.js';

export function maxInWindow(times: readonly number[], windowMs: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while ((times[hi] as number) - (times[lo] as number) >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

/**
 * Polls of an operation no fault touched (no rule, no process fault, no input, no cancel, no
 * disconnect), against the ideal: one read per server poll interval from the acknowledgement until
 * the server's terminal instant, plus the read that sees it and the fetch.
 */
export function cleanPolls(
  op: OperationPlan,
  record: ToolOperation,
  events: readonly WireEvent[],
  final: TaskRecord | null,
  input: CheckInput,
) {
  if (input.plan.process.length > 0 || input.plan.rules.some((r) => r.op === null || r.op === op.callNodeId))
    return null;
  if (op.args.ask || op.cancelAfter !== null || op.raceCancel || op.disconnect !== null) return null;
  if (final === null || final.terminalAt === null || record.state !== 'ACCEPTED') return null;
  const acked = record.history.find((h) => h.to === 'WORKING')?.at;
  if (acked === undefined) return null;
  const interval = Math.max(final.pollIntervalMs, DEFAULT_POLICY.minPollIntervalMs);
  const ideal = Math.max(0, Math.ceil((final.terminalAt - acked) / interval)) + 1;
  const polls = events.filter((e) => e.kind === 'send' && e.method === 'tasks/get').length;
  return { polls, ideal };
}
