/**
 * Waiting: timers, polls and their answers, hints, throttling, 404s, the wait budget (C6, C9), and
 * taking a record up again after a restart or a rollback.
 */
import { isTerminal } from '../../core/task.js';
import type { EventOf, RetriedRequest } from '../events.js';
import type { LocalState, ToolOperation } from '../operation.js';
import {
  deadlineReached,
  immediate,
  nextCancelPoll,
  nextCancelRetry,
  nextPoll,
  nextRetry,
  notBefore,
  throttled,
} from '../schedule.js';
import { drivesDetached, ignored, rejected, type Draft, type StepResult } from '../step.js';
import { isSettled } from '../transitions.js';
import { awaitDeadline } from './deadline.js';
import { hasFreshInput, openRound } from './input.js';
import {
  acceptCancelled,
  acceptExpired,
  changed,
  closeRound,
  isCompletion,
  isStaleServerEpoch,
  keyNeverNamedTheCall,
  lateEffect,
  maxEpoch,
  observeTerminal,
  reconcileByKey,
  toUnknown,
} from './outcomes.js';
import { changeOf, noteTerminal } from './changed.js';
import { lateAnswer } from './submission.js';

const POLLED: readonly LocalState[] = ['WORKING', 'INPUT_REQUIRED', 'CANCEL_REQUESTED'];
/** States in which a status answer is no longer the read waited for, but still a report (C13). */
const REPORTED_LATE: readonly LocalState[] = ['TERMINAL_OBSERVED', 'FETCHING_RESULT', 'UNKNOWN'];
/** States whose wake puts a request on the wire. */
const SENDS_ON_WAKE: readonly LocalState[] = [
  'WORKING',
  'CANCEL_REQUESTED',
  'TERMINAL_OBSERVED',
  'FETCHING_RESULT',
  'SUBMISSION_UNKNOWN',
  'UNKNOWN',
];

export function onWake(d: Draft, ev: EventOf<'wake'>): StepResult {
  const r = d.base;
  if (r.wakeAt === null || ev.dueAt !== r.wakeAt) return ignored(r, 'superseded_wake');
  if (r.waitingStoppedAt !== null && !drivesDetached(r, d.now)) return ignored(r, 'waiting_stopped');
  d.clearWake();
  if (deadlineReached(r, d.now)) return stopWaiting(d, 'budget');
  // A timer armed before a Retry-After arrived (C6): wait for the end of it instead of sending now.
  if (throttled(r, d.now) && sendsOnWake(r)) return d.wake(immediate(d.record, d.now)).done();
  const taskId = r.taskId;
  switch (r.state) {
    case 'WORKING':
      return issuePoll(d);
    case 'CANCEL_REQUESTED':
      // Acknowledged, or still on the wire: read the status (a lost ack costs no request timeout).
      if (r.cancelAckedGeneration >= r.cancelGeneration || cancelOnWire(r)) return issuePoll(d);
      if (taskId === null) return rejected(r, 'no_task_id');
      d.set({ cancelSentAt: d.now })
        .countAttempt('cancel')
        .emit({ type: 'send_cancel', taskId, generation: r.cancelGeneration });
      // A resend: the earlier cancel may have landed and only its ack was lost. A status read beside
      // it confirms `cancelled` at once instead of after another ack.
      return r.attempts.cancel > 0 ? issuePoll(d) : d.done();
    case 'INPUT_REQUIRED':
      // Polling is paused (C10); the only timer here resends replies the server has not acked.
      if (Object.keys(r.input.unsent).length === 0 || taskId === null) return ignored(r, 'polling_paused');
      d.countAttempt('input');
      d.emit({ type: 'send_input', taskId, round: r.input.round, responses: r.input.unsent });
      return awaitDeadline(d).done();
    case 'TERMINAL_OBSERVED':
    case 'FETCHING_RESULT':
      if (taskId === null) return rejected(r, 'no_task_id');
      d.countAttempt('fetch').moveTo('FETCHING_RESULT');
      return d.emit({ type: 'fetch_result', taskId }).done();
    case 'SUBMISSION_UNKNOWN':
      d.countAttempt('lookup');
      return d.emit({ type: 'lookup_key', submissionKey: r.submissionKey }).done();
    case 'UNKNOWN':
      return reconcileByKey(d) ? d.done() : ignored(r, 'lookups_exhausted');
    default:
      return lateAnswer(d);
  }
}

/** An unacknowledged cancel whose send is on the wire (its answer or failure will come). */
function cancelOnWire(r: ToolOperation): boolean {
  return r.cancelAckedGeneration < r.cancelGeneration && (r.cancelSentAt ?? null) !== null;
}

function sendsOnWake(r: ToolOperation): boolean {
  if (r.state === 'INPUT_REQUIRED') return Object.keys(r.input.unsent).length > 0;
  return SENDS_ON_WAKE.includes(r.state);
}

function issuePoll(d: Draft): StepResult {
  const taskId = d.record.taskId;
  if (taskId === null) return rejected(d.base, 'no_task_id');
  const seq = d.record.pollCursor.issued + 1;
  d.set({ pollCursor: { ...d.record.pollCursor, issued: seq } }).countAttempt('poll');
  return d.emit({ type: 'poll_status', taskId, seq }).done();
}

export function onStatusObserved(d: Draft, ev: EventOf<'status_observed'>): StepResult {
  const r = d.base;
  if (r.state === 'CANCELLED_ACCEPTED' && isCompletion(ev.status)) {
    return lateEffect(d, `status ${ev.status} observed after the cancel won`, ev.status);
  }
  if (REPORTED_LATE.includes(r.state)) return lateReport(d, ev);
  if (!POLLED.includes(r.state)) return lateAnswer(d);
  if (ev.seq > r.pollCursor.issued) return rejected(r, 'unissued_poll');
  if (ev.seq <= r.pollCursor.observed) return ignored(r, 'reordered');
  if (isStaleServerEpoch(r, ev.serverEpoch)) return ignored(r, 'stale_server_epoch');
  if (r.state === 'INPUT_REQUIRED' && ev.status === 'input_required' && !hasFreshInput(d, ev.inputRequests)) {
    return ignored(r, 'replayed_input');
  }
  // A task found again after a terminal status was observed must still show that status (C13).
  const change = (r.observedTerminal ?? null) === null || isTerminal(ev.status) ? null : changeOf(d, ev.status);
  if (change !== null) return changed(d, change);
  d.set({
    pollCursor: { ...r.pollCursor, observed: ev.seq },
    lastServerStatus: ev.status,
    pollIntervalMs: ev.pollIntervalMs ?? r.pollIntervalMs,
    expiresAt: ev.expiresAt === undefined ? r.expiresAt : ev.expiresAt,
    serverEpoch: maxEpoch(r.serverEpoch, ev.serverEpoch),
    ...(ev.progress === undefined ? {} : { progress: ev.progress }),
    // Never back: two reads out at once (a cancel's beside an older one) may answer out of order.
    ...(ev.eventCursor === undefined || ev.eventCursor.seq < (r.eventCursor?.seq ?? 0)
      ? {}
      : { eventCursor: ev.eventCursor }),
    ...(ev.eventsOff === undefined ? {} : { eventsOff: true }),
  }).resetFailures();

  if (isTerminal(ev.status)) {
    // Only an outstanding cancel may take `cancelled` as proof; otherwise every terminal status is
    // fetched first (C2), and a completion that beat our cancel is accepted as it is.
    if (r.state === 'CANCEL_REQUESTED' && ev.status === 'cancelled') return acceptCancelled(d);
    return observeTerminal(d, ev.status, ev.resultDigest);
  }
  if (r.state === 'CANCEL_REQUESTED') {
    // A failed cancel's resend timer is armed: it carries the next status read, no second cadence.
    if (r.cancelAckedGeneration < r.cancelGeneration && !cancelOnWire(r)) return d.done();
    return d.wake(nextCancelPoll(d.record, d.now, d.random)).done();
  }
  if (ev.status === 'input_required' && openRound(d, ev.inputRequests)) return d.done();
  if (r.state === 'INPUT_REQUIRED' && ev.status === 'working') {
    // The server no longer waits on this round (answered elsewhere or withdrawn).
    d.set({ input: closeRound(r.input) }).moveTo('WORKING');
  }
  return d.wake(nextPoll(d.record, d.now, d.random)).done();
}

/**
 * A status answer that lands after the task was seen terminal (a read still on the wire when a key
 * lookup, or another read, showed it so), or in UNKNOWN (a read that raced the 404 which sent it
 * there), is one more terminal report: compared with the first (C13), and kept when it is the first
 * or carries the result digest the first lacked, so the lookup's answer and the fetch are compared
 * with it. It moves nothing. Gate seeds 46469 and 70262: a lookup showed the result and the read on
 * the wire showed it again, neither was kept, and the changed result the fetch got was accepted;
 * 93026 and 99518: the read answered with the result was dropped in UNKNOWN. A `working` answer sent
 * before the terminal one is only late.
 */
function lateReport(d: Draft, ev: EventOf<'status_observed'>): StepResult {
  if (ev.seq > d.base.pollCursor.issued) return rejected(d.base, 'unissued_poll');
  if (!isTerminal(ev.status) || isStaleServerEpoch(d.base, ev.serverEpoch)) return lateAnswer(d);
  const change = changeOf(d, ev.status, ev.resultDigest);
  if (change !== null) return changed(d, change);
  const first = d.base.observedTerminal ?? null;
  const adds = first === null || (first.resultDigest === undefined && ev.resultDigest !== undefined);
  if (!adds) return lateAnswer(d);
  noteTerminal(d, ev.status, ev.resultDigest);
  return d.done();
}

/**
 * A terminal outcome the adapter received unasked (the 2025-11-25 side channel's blocked
 * `tasks/result`) is one more terminal report, kept the moment it arrives: the read it brings
 * forward is what moves the operation (C2), and a crash before that read no longer loses it. Gate
 * seed 6457 on that wire: the completion came while the caller was detached, the executor died, and
 * its successor followed the `cancelled` a rewriting server answered next. Now that `cancelled` is
 * a change of the completion kept (C13), for an operator.
 */
export function onTerminalHeard(d: Draft, ev: EventOf<'terminal_heard'>): StepResult {
  const r = d.base;
  if (r.state === 'CANCELLED_ACCEPTED' && isCompletion(ev.status)) {
    return lateEffect(d, `result ${ev.status} received after the cancel won`, ev.status);
  }
  if (isSettled(r.state)) return ignored(r, 'settled');
  const change = changeOf(d, ev.status, ev.resultDigest);
  if (change !== null) return changed(d, change);
  const first = r.observedTerminal ?? null;
  if (first !== null && first.resultDigest !== undefined) return ignored(r, 'no_news');
  noteTerminal(d, ev.status, ev.resultDigest);
  return d.done();
}

/**
 * A pushed hint never changes state; at most it brings the next status read forward (one extra per
 * cycle). The read is what may act: a hint's status is never taken as the task's (C2). Due now, in
 * WORKING with no read on the wire, the read leaves in this very step (one ledger write instead of a
 * wake and its step: ~5 ms of figure 3's 20 ms budget here).
 */
export function onNotification(d: Draft, ev: EventOf<'notification'>): StepResult {
  const r = d.base;
  if (r.state === 'CANCELLED_ACCEPTED' && isCompletion(ev.status)) {
    return lateEffect(d, `notification ${String(ev.status)} after the cancel won`, ev.status);
  }
  if (r.state === 'INPUT_REQUIRED') return ignored(r, 'polling_paused');
  if (r.state !== 'WORKING' && r.state !== 'CANCEL_REQUESTED') return lateAnswer(d);
  if (isStaleServerEpoch(r, ev.serverEpoch)) return ignored(r, 'stale_server_epoch');
  const news = ev.status !== undefined && ev.status !== r.lastServerStatus;
  // Brought forward at most to the end of a running Retry-After (C6).
  const at = notBefore(r, d.now);
  const canAdvance = r.wakeAt !== null && r.wakeAt > at && r.attempts.consecutiveFailures === 0;
  if (!news || !canAdvance) return ignored(r, 'no_news');
  if (r.pollCursor.issued > r.pollCursor.observed) return ignored(r, 'read_in_flight');
  // The timer is disarmed: one read on the wire at a time (two answers of one input round would open
  // it twice: gate seed 341); its answer or its failure arms the next one.
  if (at <= d.now && r.state === 'WORKING') return issuePoll(d.clearWake());
  return d.wake({ atMs: at, purpose: 'poll' }).done();
}

const RETRIED_IN: Partial<Record<LocalState, readonly RetriedRequest[]>> = {
  WORKING: ['poll'],
  INPUT_REQUIRED: ['input'],
  CANCEL_REQUESTED: ['cancel', 'poll'],
  FETCHING_RESULT: ['fetch'],
  SUBMISSION_UNKNOWN: ['lookup'],
  UNKNOWN: ['lookup'],
};

export function onRequestFailed(d: Draft, ev: EventOf<'request_failed'>): StepResult {
  const r = d.base;
  const until = ev.retryAfterMs !== undefined && ev.retryAfterMs > 0 ? d.now + Math.ceil(ev.retryAfterMs) : null;
  if (!(RETRIED_IN[r.state] ?? []).includes(ev.request)) {
    // A late 429/503 still says when the server takes requests again (C6): keep that, nothing else.
    if (until === null || isSettled(r.state) || notBefore(r, until) === (r.notBefore ?? null)) return lateAnswer(d);
    return d.set({ notBefore: until }).done();
  }
  d.countAttempt('consecutiveFailures');
  const throttle = typeof ev.code === 'number';
  const throttles = throttle ? (r.attempts.consecutiveThrottles ?? 0) + 1 : 0;
  d.set({ attempts: { ...d.record.attempts, consecutiveThrottles: throttles } });
  // Kept on the record: every later request, whatever path sends it, waits for it (C6).
  if (until !== null) d.set({ notBefore: notBefore(r, until) });
  if (ev.request === 'cancel') d.set({ cancelSentAt: null });
  // A throttle backs off on its own streak (the server answered); a lost request on the outage's.
  const failures = throttle ? throttles : d.record.attempts.consecutiveFailures;
  d.set({
    lastFailure: {
      request: ev.request,
      code: String(ev.code),
      reason: ev.reason ?? (throttle ? `HTTP ${ev.code}` : 'no answer'),
      attempt: failures,
      at: d.now,
    },
  });
  if (r.state !== 'CANCEL_REQUESTED')
    return d.wake(nextRetry(d.record, d.now, d.random, failures, ev.retryAfterMs)).done();
  // A cancel is confirmed on a short fixed cadence, not the poll back-off (cancel p99 target < 5 s).
  // The cancel and a status read fail apart: the second failure never pushes back the timer the
  // first one armed (its wake sends whatever is owed, after any Retry-After: C6).
  const plan = nextCancelRetry(d.record, d.now, d.random, failures, ev.retryAfterMs);
  if (r.wakeAt !== null && r.wakeAt > d.now && r.wakeAt <= plan.atMs) return d.done();
  return d.wake(plan).done();
}

export function onNotFound(d: Draft, ev: EventOf<'not_found'>): StepResult {
  const r = d.base;
  const expired = ev.afterExpiry ?? (r.expiresAt !== null && d.now >= r.expiresAt);
  const found = `${ev.request ?? 'request'} answered not found ${expired ? 'after' : 'before'} expiry`;
  const detail = ev.note === undefined ? found : `${found}: ${ev.note}`;
  switch (r.state) {
    case 'WORKING':
    case 'INPUT_REQUIRED':
    case 'CANCEL_REQUESTED':
      return toUnknown(d, 'not_found', detail, true);
    case 'TERMINAL_OBSERVED':
    case 'FETCHING_RESULT':
      // The observed terminal status is the receipt once the server purged the task (seed 002).
      return expired ? acceptExpired(d, r.lastServerStatus) : toUnknown(d, 'not_found', detail, true);
    default:
      return lateAnswer(d);
  }
}

export function onBudgetExhausted(d: Draft, ev: EventOf<'budget_exhausted'>): StepResult {
  const r = d.base;
  if (isSettled(r.state)) return ignored(r, 'settled');
  if (r.waitingStoppedAt !== null) return ignored(r, 'already_stopped');
  return stopWaiting(d, ev.reason);
}

/**
 * C9: local waiting stops; the server task is left alone (no cancel effect, no state change). A
 * cancel the caller already asked for is not waiting but a request owed to the server (C8): a
 * disconnect or local timeout releases the caller, while the executor keeps delivering and
 * confirming the cancel until the wait budget ends (see `drivesDetached`).
 */
function stopWaiting(d: Draft, reason: 'budget' | 'local_timeout' | 'disconnect'): StepResult {
  d.set({ waitingStoppedAt: d.now });
  if (reason === 'budget' || !drivesDetached(d.record, d.now)) d.clearWake();
  return d.emit({ type: 'stop_waiting', reason }).done();
}

export function onResumed(d: Draft, ev: EventOf<'resumed'>): StepResult {
  if (isSettled(d.base.state)) return ignored(d.base, 'settled');
  if (ev.deadlineAt !== undefined) setDeadline(d, ev.deadlineAt);
  return resume(d);
}

export function onRollback(d: Draft, ev: EventOf<'rollback'>): StepResult {
  const r = d.base;
  if (ev.newEpoch <= r.executionEpoch) return ignored(r, 'stale_epoch');
  // Rollback takes over in-flight items only; settled ones keep their epoch and receipt.
  if (isSettled(r.state)) return ignored(r, 'settled');
  d.set({ executionEpoch: ev.newEpoch });
  if (ev.deadlineAt !== undefined) setDeadline(d, ev.deadlineAt);
  return resume(d);
}

/**
 * C11: a second waiter on an operation still waited for extends the wait to its own deadline (the
 * later one wins; null is unbounded), never shortens the first waiter's. An operation whose waiter
 * gave up (budget, detach) is taken up again with the new waiter's deadline, as after a restart,
 * except that a submission this process sent is still its own to answer (C12).
 */
export function onWaiterJoined(d: Draft, ev: EventOf<'waiter_joined'>): StepResult {
  const r = d.base;
  if (isSettled(r.state)) return ignored(r, 'settled');
  if (r.waitingStoppedAt !== null) {
    setDeadline(d, ev.deadlineAt);
    // The driver is this process's: its submission is still on the wire (or at the approval gate)
    // and its answer or failure is still to come. Taken up as after a restart, it was called lost
    // (UNKNOWN plain_call_lost, or a key lookup) and the synchronous answer that arrived 12-24 ms
    // later was dropped as a late answer (C12: gate seeds 27292, 46091, 70307, 71522).
    if (r.state === 'SUBMITTING') return awaitDeadline(d.set({ waitingStoppedAt: null })).done();
    return resume(d);
  }
  const current = r.policy.deadlineAt;
  const later = current === null || ev.deadlineAt === null ? null : Math.max(current, ev.deadlineAt);
  if (later === current) return ignored(r, 'no_news');
  setDeadline(d, later);
  // The one timer may be the old deadline: where it would have stopped waiting it now polls (the
  // wake finds the deadline not reached); only INPUT_REQUIRED, where that wake sends nothing unless
  // a reply is owed, re-arms (`rearmInput`).
  if (r.state === 'INPUT_REQUIRED' && r.wakeAt !== null && r.wakeAt === current) return rearmInput(d.clearWake());
  return awaitDeadline(d).done();
}

/**
 * A reply still unsent had its resend cut short to the old deadline (`nextRetry` never plans past
 * it), so that wake was the resend too: planned again against the new deadline. Disarmed with the
 * deadline, the reply was never resent and the task waited on it for good (C11: gate seeds 117965,
 * 218875, 252975, a reply lost to a server crash). A reply on the wire meanwhile: its answer or
 * failure supersedes this timer.
 */
function rearmInput(d: Draft): StepResult {
  if (Object.keys(d.record.input.unsent).length === 0) return awaitDeadline(d).done();
  const failures = d.record.attempts.consecutiveFailures;
  return d.wake(nextRetry(d.record, d.now, d.random, failures)).done();
}

function setDeadline(d: Draft, deadlineAt: number | null): void {
  d.set({ policy: { ...d.record.policy, deadlineAt } });
}

/**
 * Re-issues whatever the state is waiting for; answers to requests sent before are still accepted.
 * A Retry-After still running (kept on the record across the crash) defers every request to a timer
 * at its end (C6).
 */
function resume(d: Draft): StepResult {
  const r = d.base;
  // Nothing sent before the restart is still on the wire for this process.
  d.set({ waitingStoppedAt: null, cancelSentAt: null });
  const hold = throttled(r, d.now);
  switch (r.state) {
    case 'SUBMITTING':
      if (r.attempts.submit === 0) return d.emit({ type: 'send_submit', submissionKey: r.submissionKey }).done();
      // C12: the call went out plainly, without the key: it may have run and no lookup can tell.
      if (r.taskId === null && keyNeverNamedTheCall(r)) {
        return toUnknown(
          d,
          'plain_call_lost',
          'restarted while a plain call (no submission key) was on the wire: it may have run; not resubmitted',
          false,
        );
      }
      // The submission may have reached the server: only the key can tell (C5).
      d.addEvidence('submit_lost', 'restarted after the submission was sent');
      d.moveTo('SUBMISSION_UNKNOWN').clearWake();
      if (hold) return d.wake(immediate(d.record, d.now)).done();
      d.countAttempt('lookup');
      return d.emit({ type: 'lookup_key', submissionKey: r.submissionKey }).done();
    case 'SUBMISSION_UNKNOWN':
      if (hold) return d.wake(immediate(d.record, d.now)).done();
      d.countAttempt('lookup');
      return d.emit({ type: 'lookup_key', submissionKey: r.submissionKey }).done();
    case 'NOT_FOUND_SAFE':
      return d.emit({ type: 'offer_resubmit', priorSubmissionKey: r.submissionKey }).done();
    case 'UNKNOWN':
      if (hold && r.attempts.reconcile < r.policy.maxReconcileLookups) return d.wake(immediate(d.record, d.now)).done();
      reconcileByKey(d);
      return d.done();
    case 'INPUT_REQUIRED': {
      const { round, pending, unsent } = r.input;
      const unanswered = Object.fromEntries(Object.entries(pending).filter(([key]) => !(key in unsent)));
      if (Object.keys(unanswered).length > 0) d.emit({ type: 'ask_approval', round, requests: unanswered });
      if (Object.keys(unsent).length > 0 && r.taskId !== null) {
        if (hold) return d.wake(immediate(d.record, d.now)).done();
        d.countAttempt('input').emit({ type: 'send_input', taskId: r.taskId, round, responses: unsent });
      }
      return awaitDeadline(d).done();
    }
    default:
      return d.wake(immediate(d.record, d.now)).done();
  }
}
