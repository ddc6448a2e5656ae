/**
 * Cancel is a request, not a reverse completion (seed 002): the generation is bumped by
 * compare-and-set and CANCEL_REQUESTED recorded before the send (C8); only the server's answer or
 * status proves `cancelled`; a completion that won the race is accepted as it is, never rewritten.
 */
import type { EventOf } from '../events.js';
import type { LocalState } from '../operation.js';
import { nextCancelPoll, immediate } from '../schedule.js';
import { ignored, rejected, type Draft, type RejectReason, type StepResult } from '../step.js';
import { isSettled } from '../transitions.js';
import { acceptCancelled, closeRound, observeTerminal } from './outcomes.js';
import { lateAnswer } from './submission.js';

const CANCELLABLE: readonly LocalState[] = ['WORKING', 'INPUT_REQUIRED', 'CANCEL_REQUESTED'];

export function onCancelRequested(d: Draft, ev: EventOf<'cancel_requested'>): StepResult {
  const r = d.base;
  if (!CANCELLABLE.includes(r.state)) return rejected(r, whyNotCancellable(r.state));
  if (ev.expectedGeneration < r.cancelGeneration) return rejected(r, 'stale_generation');
  if (ev.expectedGeneration > r.cancelGeneration) return rejected(r, 'future_generation');
  const taskId = r.taskId;
  if (taskId === null) return rejected(r, 'no_task_id');
  const generation = r.cancelGeneration + 1;
  // An explicit cancel re-attaches a caller that had stopped waiting: the cancel needs confirming.
  // The caller's cancel goes out at once even inside a Retry-After: it is one request, not a poll
  // nor a retry. Its resends and the status reads confirming it wait for the Retry-After (C6).
  // The status cadence goes on beside the send: the first read one poll interval later confirms a
  // cancel whose ack is lost or slow, instead of waiting out the request timeout (30 s over HTTP).
  d.set({ cancelGeneration: generation, cancelSentAt: d.now, waitingStoppedAt: null, input: closeRound(r.input) })
    .countAttempt('cancel')
    .moveTo('CANCEL_REQUESTED');
  return d
    .emit({ type: 'send_cancel', taskId, generation })
    .wake(nextCancelPoll(d.record, d.now, d.random))
    .done();
}

export function onCancelAcked(d: Draft, ev: EventOf<'cancel_acked'>): StepResult {
  const r = d.base;
  if (r.state !== 'CANCEL_REQUESTED') return lateAnswer(d);
  if (ev.generation > r.cancelGeneration) return rejected(r, 'future_generation');
  // A `cancelled` answer proves the server state whatever generation it answers.
  if (ev.status === 'cancelled') return acceptCancelled(d);
  if (ev.status === 'completed' || ev.status === 'failed') return observeTerminal(d, ev.status);
  if (ev.generation < r.cancelGeneration) return ignored(r, 'stale_generation');
  // Empty ack (2026 extension): eventually consistent, keep polling until a terminal status shows.
  d.set({
    cancelAckedGeneration: Math.max(r.cancelAckedGeneration, ev.generation),
    cancelSentAt: null,
  }).resetFailures();
  // Confirmed on the executor's own cadence, not the server's (possibly 30 s) interval: defect 7.
  return d.wake(nextCancelPoll(d.record, d.now, d.random)).done();
}

export function onCancelRejectedTerminal(d: Draft, ev: EventOf<'cancel_rejected_terminal'>): StepResult {
  const r = d.base;
  if (r.state !== 'CANCEL_REQUESTED') return lateAnswer(d);
  if (ev.generation > r.cancelGeneration) return rejected(r, 'future_generation');
  if (ev.status === 'cancelled') return acceptCancelled(d);
  if (ev.status !== undefined) return observeTerminal(d, ev.status);
  if (ev.generation < r.cancelGeneration) return ignored(r, 'stale_generation');
  // Terminal but not which: stop resending and read the status now.
  d.set({
    cancelAckedGeneration: Math.max(r.cancelAckedGeneration, ev.generation),
    cancelSentAt: null,
  }).resetFailures();
  return d.wake(immediate(d.record, d.now)).done();
}

function whyNotCancellable(state: LocalState): RejectReason {
  if (isSettled(state)) return 'settled';
  if (state === 'TERMINAL_OBSERVED' || state === 'FETCHING_RESULT') return 'already_terminal';
  if (state === 'UNKNOWN') return 'in_doubt';
  return 'no_task_id';
}
