/**
 * Submission and its doubt: SUBMITTING, SUBMISSION_UNKNOWN, NOT_FOUND_SAFE, NEVER_CREATED and the
 * key-lookup side of UNKNOWN. A doubtful submission is resolved only by looking its key up; a new key
 * is used only after the server proved the old one never created anything (C5).
 */
import type { EventOf } from '../events.js';
import { isSettled } from '../transitions.js';
import { ignored, rejected, type Draft, type StepResult } from '../step.js';
import { digestOf } from '../../core/digest.js';
import { awaitDeadline } from './deadline.js';
import { acceptanceOf, countReconciled, keyNeverNamedTheCall, rediscovered, toUnknown } from './outcomes.js';

export function onSubmitSent(d: Draft, _ev: EventOf<'submit_sent'>): StepResult {
  if (d.base.state !== 'SUBMITTING') return lateAnswer(d);
  return d.countAttempt('submit').done();
}

export function onSubmitAcked(d: Draft, ev: EventOf<'submit_acked'>): StepResult {
  const { state, taskId } = d.base;
  // A late answer to the original submission also settles a doubt, as long as no other task id was
  // adopted meanwhile: same key, same operation (C5).
  const settlesDoubt = state === 'SUBMISSION_UNKNOWN' || (state === 'UNKNOWN' && taskId === null);
  if (state !== 'SUBMITTING' && !settlesDoubt) return lateAnswer(d);
  return rediscovered(d, ev);
}

/**
 * C12: a synchronous answer to the submission is the call's terminal result: verified (digest
 * recomputed, `validateResult`) and accepted in one step, no task id. A call the server ran is never
 * recorded as never created; an answer that fails verification goes to UNKNOWN with the evidence.
 */
export function onSubmitCompleted(d: Draft, ev: EventOf<'submit_completed'>): StepResult {
  if (d.base.state !== 'SUBMITTING') return lateAnswer(d);
  if (!ev.valid || !digestMatches(ev.payload, ev.digest)) {
    return toUnknown(d, 'result_unverifiable', 'the synchronous answer to the call did not verify', false);
  }
  d.set({ lastServerStatus: 'completed', resultDigest: ev.digest }).resetFailures().clearWake().moveTo('ACCEPTED');
  const acceptance = { ...acceptanceOf(d.record, '', 'completed', ev.payload, ev.digest), immediate: true };
  return d.emit({ type: 'accept_terminal', acceptance }).done();
}

function digestMatches(payload: unknown, digest: string): boolean {
  try {
    return digestOf(payload) === digest;
  } catch {
    return false;
  }
}

/**
 * MRTR (SEP-2322): the server asks for input before it creates anything. The operation stays
 * SUBMITTING (no task exists, nothing ran); the round goes to the approval gate (C10) and, once every
 * request has its reply, the submission is retried with them under the same key (C5: the server
 * never used it). The wait budget still holds while the gate is asked.
 */
export function onSubmitInputRequired(d: Draft, ev: EventOf<'submit_input_required'>): StepResult {
  const r = d.base;
  if (r.state !== 'SUBMITTING') return lateAnswer(d);
  const round = Math.max(r.input.round, r.preTaskInput?.round ?? 0) + 1;
  const requests = { ...ev.requests };
  const again = askedAgain(r.preTaskRefused ?? [], requests);
  if (again !== null || round > MAX_PRE_TASK_ROUNDS) {
    const detail =
      again !== null
        ? `the server asked ${describeQuestion(again, requests[again])} again after the caller declined or cancelled it: not answered again, and nothing was created`
        : `the server asked a ${round}th question before creating the task (at most ${MAX_PRE_TASK_ROUNDS} are answered): nothing was created`;
    d.addEvidence('input_asked_again', detail);
    return d.set({ preTaskInput: null }).resetFailures().clearWake().moveTo('NEVER_CREATED').done();
  }
  d.set({
    input: { ...r.input, round },
    preTaskInput: {
      round,
      requests,
      replies: {},
      ...(ev.requestState === undefined ? {} : { requestState: ev.requestState }),
    },
  }).resetFailures();
  // Nothing to ask (only a requestState): retry at once with it.
  if (Object.keys(requests).length === 0) return retryWithReplies(d);
  return awaitDeadline(d.emit({ type: 'ask_approval', round, requests })).done();
}

/** The gate's reply to one request of a pre-task round; the last one retries the submission. */
export function onPreTaskAnswered(d: Draft, ev: EventOf<'input_answered'>): StepResult {
  const pre = d.base.preTaskInput ?? null;
  if (pre === null || d.base.state !== 'SUBMITTING') return ignored(d.base, 'stale_round');
  if (ev.round < pre.round) return ignored(d.base, 'stale_round');
  if (ev.round > pre.round) return rejected(d.base, 'unknown_round');
  if (!(ev.key in pre.requests)) return rejected(d.base, 'unknown_input_key');
  if (ev.key in pre.replies) return ignored(d.base, 'replayed_input');
  const replies = { ...pre.replies, [ev.key]: ev.reply };
  d.set({ preTaskInput: { ...pre, replies } });
  if (Object.keys(pre.requests).every((key) => key in replies)) return retryWithReplies(d);
  return d.done();
}

function retryWithReplies(d: Draft): StepResult {
  const pre = d.record.preTaskInput!;
  const refused = Object.keys(pre.replies)
    .filter((key) => isRefusal(pre.replies[key]))
    .map((key) => questionDigest(key, pre.requests[key]));
  if (refused.length > 0) {
    const kept = [...(d.record.preTaskRefused ?? []), ...refused];
    d.set({ preTaskRefused: kept.slice(-MAX_PRE_TASK_ROUNDS) });
  }
  d.set({ preTaskInput: null }).clearWake();
  return d
    .emit({
      type: 'send_submit',
      submissionKey: d.record.submissionKey,
      inputResponses: pre.replies,
      ...(pre.requestState === undefined ? {} : { requestState: pre.requestState }),
    })
    .done();
}

/**
 * Pre-task rounds answered before a call ends NEVER_CREATED: a server that asks without end (a new
 * question each round) is not answered without end. Far above any form a person fills in.
 */
export const MAX_PRE_TASK_ROUNDS = 32;

/** A reply that says no: an elicitation declined or cancelled (the CLI cancels at the end of its input). */
function isRefusal(reply: unknown): boolean {
  if (reply === null || typeof reply !== 'object') return false;
  const action = (reply as { action?: unknown }).action;
  return action === 'decline' || action === 'cancel';
}

function questionDigest(key: string, request: unknown): string {
  return digestOf({ key, request: request ?? null });
}

/** The key of a question of this round the caller already refused, unchanged; null when none is. */
function askedAgain(refused: readonly string[], requests: Readonly<Record<string, unknown>>): string | null {
  if (refused.length === 0) return null;
  return Object.keys(requests).find((key) => refused.includes(questionDigest(key, requests[key]))) ?? null;
}

/** `"user_name" ("What is your name?")`: the key and, when the request has one, its message. */
function describeQuestion(key: string, request: unknown): string {
  const params = (request as { params?: { message?: unknown } } | null)?.params;
  const message = params?.message ?? (request as { message?: unknown } | null)?.message;
  const shown = typeof message === 'string' ? ` (${JSON.stringify(message.slice(0, 80))})` : '';
  return `${JSON.stringify(key)}${shown}`;
}

export function onSubmitLost(d: Draft, ev: EventOf<'submit_lost'>): StepResult {
  if (d.base.state !== 'SUBMITTING') return lateAnswer(d);
  if (ev.unkeyed === true) {
    // C12: the key was never sent with this call, so its lookup would say "never created" for a call
    // that may have run; sending it again may run it twice. Only an operator can settle it.
    const detail = `the tool was called plainly, without a submission key, and its answer was lost (${ev.reason}): it may have run; not resubmitted`;
    return toUnknown(d, 'plain_call_lost', detail, false);
  }
  d.addEvidence('submit_lost', ev.reason);
  return lookUpKey(d.moveTo('SUBMISSION_UNKNOWN'));
}

/** Recorded before the plain call leaves (C12): a restart while it is on the wire must not look the key up. */
export function onSubmitUnkeyed(d: Draft, _ev: EventOf<'submit_unkeyed'>): StepResult {
  if (d.base.state !== 'SUBMITTING') return lateAnswer(d);
  d.addEvidence('plain_call_sent', 'the tool makes no task: called plainly, without the submission key');
  return d.done();
}

export function onSubmitRejected(d: Draft, ev: EventOf<'submit_rejected'>): StepResult {
  if (d.base.state !== 'SUBMITTING') return lateAnswer(d);
  d.addEvidence('submit_rejected', `${ev.code}: ${ev.message}`);
  return d.moveTo('NEVER_CREATED').done();
}

export function onKeyLookupFound(d: Draft, ev: EventOf<'key_lookup_found'>): StepResult {
  const { state, taskId } = d.base;
  if (state !== 'SUBMISSION_UNKNOWN' && state !== 'UNKNOWN') return lateAnswer(d);
  if (taskId !== null && taskId !== ev.taskId) {
    // Task id misuse: the key is the authority on which task this call created.
    d.addEvidence('task_id_replaced', `${taskId} -> ${ev.taskId}`);
  }
  return rediscovered(countReconciled(d), ev);
}

export function onKeyLookupNeverCreated(d: Draft, _ev: EventOf<'key_lookup_never_created'>): StepResult {
  const { state, taskId, submissionKey } = d.base;
  if (state === 'SUBMISSION_UNKNOWN') {
    return d.moveTo('NOT_FOUND_SAFE').emit({ type: 'offer_resubmit', priorSubmissionKey: submissionKey }).done();
  }
  if (state !== 'UNKNOWN') return lateAnswer(d);
  // A synchronous answer that did not verify (C12) proves the call ran, whatever the key says; a lost
  // plain call may have run without the key: "never created" proves nothing about either.
  if (taskId === null && keyNeverNamedTheCall(d.base)) return ignored(d.base, 'key_proves_nothing');
  countReconciled(d);
  if (taskId === null) return d.moveTo('NEVER_CREATED').done();
  // The server once acknowledged a task under this key: "never created" contradicts it (lost server
  // state?). Resubmitting could run the call twice, so the doubt stays with the operator.
  const evidence = d.addEvidence('never_created_after_ack', `key lookup denies acknowledged task ${taskId}`);
  return d.emit({ type: 'record_unknown', evidence }).done();
}

export function onKeyLookupUnsupported(d: Draft, _ev: EventOf<'key_lookup_unsupported'>): StepResult {
  const { state } = d.base;
  if (state === 'SUBMISSION_UNKNOWN') {
    return toUnknown(d, 'key_lookup_unsupported', 'server cannot look submission keys up', false);
  }
  if (state !== 'UNKNOWN') return lateAnswer(d);
  countReconciled(d).addEvidence('key_lookup_unsupported', 'reconciliation lookup unsupported');
  return d.done();
}

export function onResubmit(d: Draft, ev: EventOf<'resubmit'>): StepResult {
  const r = d.base;
  if (r.state !== 'NOT_FOUND_SAFE' && r.state !== 'NEVER_CREATED') return rejected(r, 'not_never_created');
  if (ev.submissionKey === r.submissionKey || r.priorSubmissionKeys.includes(ev.submissionKey)) {
    return rejected(r, 'key_reused');
  }
  d.set({
    submissionKey: ev.submissionKey,
    priorSubmissionKeys: [...r.priorSubmissionKeys, r.submissionKey],
    taskId: null,
    lastServerStatus: null,
    serverEpoch: null,
    expiresAt: null,
    waitingStoppedAt: null,
    attempts: { ...r.attempts, submit: 0, consecutiveFailures: 0 },
  }).clearWake();
  return d.moveTo('SUBMITTING').emit({ type: 'send_submit', submissionKey: ev.submissionKey }).done();
}

export function onAbandon(d: Draft, _ev: EventOf<'abandon'>): StepResult {
  if (d.base.state !== 'NOT_FOUND_SAFE') return rejected(d.base, 'not_never_created');
  return d.moveTo('NEVER_CREATED').done();
}

/** Issues a lookup of the current key (never a new key: C5). */
export function lookUpKey(d: Draft): StepResult {
  d.countAttempt('lookup').clearWake();
  return d.emit({ type: 'lookup_key', submissionKey: d.record.submissionKey }).done();
}

export function lateAnswer(d: Draft): StepResult {
  return ignored(d.base, isSettled(d.base.state) ? 'settled' : 'late_answer');
}
