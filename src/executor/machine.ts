/**
 * The operation state machine: `next(record, event, now, random) -> { record, effects }`.
 *
 * Pure and total: no I/O, no clock, no randomness of its own (`now` and a uniform `random` in [0, 1)
 * are arguments), never throws, never mutates its input. Every event gets one of three outcomes:
 * - `applied`: a new record (possibly in the same state) and the effects to perform, in order;
 * - `ignored`: a legitimate but useless arrival (late, duplicated, reordered, stale epoch), with a reason;
 * - `rejected`: an event that is invalid for the record (a caller or interpreter error), with a reason.
 * Ignored and rejected steps return the input record itself and no effects.
 *
 * The interpreter MUST persist an applied record (through `Ledger.apply`, or `Ledger.acceptTerminal`
 * when the effects contain `accept_terminal`) before performing any of its effects.
 *
 * @example
 * const step = next(record, { type: 'wake', epoch: record.executionEpoch, dueAt: record.wakeAt! }, clock.now(), random.next());
 * if (step.outcome === 'applied') { await ledger.apply({ record: step.record, expectedRevision: record.revision }); run(step.effects); }
 */
import type { Effect } from './effects.js';
import type { OperationEvent } from './events.js';
import type { ToolOperation } from './operation.js';
import { Draft, ignored, rejected, type StepResult } from './step.js';
import { onCancelAcked, onCancelRejectedTerminal, onCancelRequested } from './handlers/cancel.js';
import { onInputAnswered, onInputSent } from './handlers/input.js';
import {
  onBudgetExhausted,
  onNotFound,
  onNotification,
  onTerminalHeard,
  onRequestFailed,
  onResumed,
  onRollback,
  onStatusObserved,
  onWaiterJoined,
  onWake,
} from './handlers/polling.js';
import { onResultFetched } from './handlers/result.js';
import {
  onAbandon,
  onKeyLookupFound,
  onKeyLookupNeverCreated,
  onKeyLookupUnsupported,
  onResubmit,
  onSubmitAcked,
  onSubmitCompleted,
  onSubmitInputRequired,
  onSubmitLost,
  onSubmitUnkeyed,
  onSubmitRejected,
  onSubmitSent,
} from './handlers/submission.js';

export type { StepResult, IgnoreReason, RejectReason } from './step.js';

/**
 * The operation machine's step function, as its interpreter (`OperationDriver`) takes it: the real
 * `next` below, or (in the simulation only) a deliberately broken variant of it.
 */
export type NextFn = (record: ToolOperation, event: OperationEvent, now: number, random: number) => StepResult;

/**
 * Computes the next record and effects for `event`; see the module comment for the contract.
 *
 * @example
 * ```ts
 * const step = next(record, { type: 'wake', epoch: record.executionEpoch, dueAt: record.wakeAt! }, clock.now(), random.next());
 * if (step.outcome === 'applied') {
 *   await ledger.apply({ record: step.record, expectedRevision: record.revision }); // persisted first
 *   for (const effect of step.effects) await perform(effect);
 * }
 * ```
 */
export function next(record: ToolOperation, event: OperationEvent, now: number, random: number): StepResult {
  if (event === null || typeof event !== 'object' || typeof event.type !== 'string') {
    return rejected(record, 'unknown_event');
  }
  const d = new Draft(record, event.type, now, random);
  if (event.type === 'rollback') return onRollback(d, event);
  if (typeof event.epoch !== 'number' || event.epoch < record.executionEpoch) return ignored(record, 'stale_epoch');
  if (event.epoch > record.executionEpoch) return rejected(record, 'future_epoch');
  switch (event.type) {
    case 'submit_sent':
      return onSubmitSent(d, event);
    case 'submit_acked':
      return onSubmitAcked(d, event);
    case 'submit_input_required':
      return onSubmitInputRequired(d, event);
    case 'submit_completed':
      return onSubmitCompleted(d, event);
    case 'submit_lost':
      return onSubmitLost(d, event);
    case 'submit_unkeyed':
      return onSubmitUnkeyed(d, event);
    case 'submit_rejected':
      return onSubmitRejected(d, event);
    case 'key_lookup_found':
      return onKeyLookupFound(d, event);
    case 'key_lookup_never_created':
      return onKeyLookupNeverCreated(d, event);
    case 'key_lookup_unsupported':
      return onKeyLookupUnsupported(d, event);
    case 'wake':
      return onWake(d, event);
    case 'status_observed':
      return onStatusObserved(d, event);
    case 'notification':
      return onNotification(d, event);
    case 'terminal_heard':
      return onTerminalHeard(d, event);
    case 'input_answered':
      return onInputAnswered(d, event);
    case 'input_sent':
      return onInputSent(d, event);
    case 'cancel_requested':
      return onCancelRequested(d, event);
    case 'cancel_acked':
      return onCancelAcked(d, event);
    case 'cancel_rejected_terminal':
      return onCancelRejectedTerminal(d, event);
    case 'result_fetched':
      return onResultFetched(d, event);
    case 'not_found':
      return onNotFound(d, event);
    case 'request_failed':
      return onRequestFailed(d, event);
    case 'budget_exhausted':
      return onBudgetExhausted(d, event);
    case 'resubmit':
      return onResubmit(d, event);
    case 'abandon':
      return onAbandon(d, event);
    case 'resumed':
      return onResumed(d, event);
    case 'waiter_joined':
      return onWaiterJoined(d, event);
    default:
      return rejected(record, 'unknown_event');
  }
}

/**
 * The effects owed by a record just created with `newOperation` (after it was persisted).
 *
 * @example
 * ```ts
 * initialEffects(newOperation(input)); // [{ type: 'send_submit', submissionKey: input.submissionKey }]
 * ```
 */
export function initialEffects(record: ToolOperation): readonly Effect[] {
  return record.state === 'SUBMITTING' && record.attempts.submit === 0
    ? [{ type: 'send_submit', submissionKey: record.submissionKey }]
    : [];
}
