/**
 * Wire answers and failures turned into machine events. Pure: the interpreter performs the request,
 * these say what it means. Every `WireFailure` kind has exactly one meaning per request.
 */
import { digestOf } from '../core/digest.js';
import type { TerminalStatus } from '../core/task.js';
import type { OperationEvent, RetriedRequest } from './events.js';
import type { Progress, ToolOperation } from './operation.js';
import type { StatusRead } from './status-by-events.js';
import {
  WireFailure,
  type CancelAnswer,
  type KeyLookupAnswer,
  type ResultAnswer,
  type SubmitAnswer,
  type TaskSnapshot,
} from './wire-port.js';

function sighting(snapshot: TaskSnapshot): {
  taskId: string;
  status: TaskSnapshot['status'];
  pollIntervalMs?: number;
  expiresAt?: number;
  resultDigest?: string;
} {
  return {
    taskId: snapshot.taskId,
    status: snapshot.status,
    ...(snapshot.pollIntervalMs === undefined ? {} : { pollIntervalMs: snapshot.pollIntervalMs }),
    ...(snapshot.expiresAt === undefined ? {} : { expiresAt: snapshot.expiresAt }),
    ...inlinedDigest(snapshot),
  };
}

/** The digest of the terminal outcome a task object inlined, compared with later reports (C13). */
function inlinedDigest(snapshot: TaskSnapshot): { resultDigest?: string } {
  return snapshot.outcome === undefined ? {} : { resultDigest: digestOf(payloadOf(snapshot.outcome)) };
}

/** A terminal outcome the wire received unasked (`onTerminalHeard`). */
export function terminalHeard(outcome: ResultAnswer, epoch: number): OperationEvent {
  return { type: 'terminal_heard', epoch, status: outcome.status, resultDigest: digestOf(payloadOf(outcome)) };
}

/** `valid`: what `validateResult` said of a synchronous answer (C12); a task answer ignores it. */
export function submitAnswered(answer: SubmitAnswer, epoch: number, valid = true): OperationEvent {
  if (answer.kind === 'task') return { type: 'submit_acked', epoch, ...sighting(answer) };
  if (answer.kind === 'input_required') {
    return {
      type: 'submit_input_required',
      epoch,
      requests: answer.inputRequests,
      ...(answer.requestState === undefined ? {} : { requestState: answer.requestState }),
    };
  }
  // C12: the tool ran and this is its result: the operation's terminal answer, not a refusal.
  return { type: 'submit_completed', epoch, payload: answer.result, digest: digestOf(answer.result), valid };
}

/**
 * A failed submission. Only a definitive answer (`rejected`, `not_found`, `unauthorized`: the
 * credentials were refused before the call was looked at) proves nothing was created;
 * no answer, an unreadable answer and 429/503 (a proxy may have passed it on) leave the doubt that
 * only the submission key can settle (C5).
 */
export function submitFailed(error: unknown, epoch: number): OperationEvent {
  if (
    error instanceof WireFailure &&
    (error.kind === 'rejected' || error.kind === 'not_found' || error.kind === 'unauthorized')
  ) {
    return {
      type: 'submit_rejected',
      epoch,
      code: String(error.rpcCode ?? error.httpStatus ?? error.kind),
      message: error.message,
    };
  }
  return {
    type: 'submit_lost',
    epoch,
    reason: error instanceof Error ? error.message : String(error),
    ...(error instanceof WireFailure && error.unkeyed ? { unkeyed: true } : {}),
  };
}

export function lookupAnswered(answer: KeyLookupAnswer, epoch: number): OperationEvent {
  switch (answer.kind) {
    case 'found':
      return { type: 'key_lookup_found', epoch, ...sighting(answer) };
    case 'never_created':
      return { type: 'key_lookup_never_created', epoch };
    default:
      return { type: 'key_lookup_unsupported', epoch };
  }
}

export function lookupFailed(error: unknown, epoch: number): OperationEvent {
  // A definitive refusal of the lookup itself (capability missing, say): the server cannot settle it.
  if (error instanceof WireFailure && error.kind === 'rejected') return { type: 'key_lookup_unsupported', epoch };
  return requestFailed('lookup', error, epoch);
}

/** A status read's answer; by events, it carries the cursor the step keeps and a completion's digest. */
export function statusObserved(read: StatusRead, seq: number, epoch: number): OperationEvent {
  const { snapshot } = read;
  return {
    type: 'status_observed',
    epoch,
    seq,
    status: snapshot.status,
    ...(snapshot.pollIntervalMs === undefined ? {} : { pollIntervalMs: snapshot.pollIntervalMs }),
    ...(snapshot.expiresAt === undefined ? {} : { expiresAt: snapshot.expiresAt }),
    ...(snapshot.inputRequests === undefined ? {} : { inputRequests: snapshot.inputRequests }),
    ...(snapshot.progress === undefined ? {} : { progress: progressOf(snapshot) }),
    ...inlinedDigest(snapshot),
    ...(read.resultDigest === undefined ? {} : { resultDigest: read.resultDigest }),
    ...(read.eventCursor === undefined ? {} : { eventCursor: read.eventCursor }),
    ...(read.eventsOff === undefined ? {} : { eventsOff: true }),
  };
}

/** The payload a result answer is accepted with (and digested over): result, error, or null. */
function payloadOf(answer: ResultAnswer): unknown {
  return answer.status === 'completed' ? answer.result : answer.status === 'failed' ? answer.error : null;
}

function progressOf(snapshot: TaskSnapshot): Progress {
  const { done, total, message } = snapshot.progress!;
  return { done, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) };
}

export function resultFetched(answer: ResultAnswer, epoch: number, valid: boolean): OperationEvent {
  const payload = payloadOf(answer);
  return {
    type: 'result_fetched',
    epoch,
    status: answer.status,
    payload,
    digest: digestOf(payload),
    truncated: false,
    malformed: !valid,
  };
}

/** An unreadable result is refetched (C2); anything else is a retried fetch or a 404. */
export function fetchFailed(error: unknown, record: ToolOperation, epoch: number): OperationEvent {
  if (error instanceof WireFailure && error.kind === 'malformed') {
    const status: TerminalStatus = isTerminalStatus(record.lastServerStatus) ? record.lastServerStatus : 'completed';
    return {
      type: 'result_fetched',
      epoch,
      status,
      payload: undefined,
      digest: '',
      truncated: true,
      malformed: true,
      reason: error.message,
    };
  }
  return requestFailed('fetch', error, epoch);
}

export function cancelAnswered(answer: CancelAnswer, generation: number, epoch: number): OperationEvent {
  if (answer.kind === 'acked') {
    return {
      type: 'cancel_acked',
      epoch,
      generation,
      ...(answer.status === undefined ? {} : { status: answer.status }),
    };
  }
  const status = isTerminalStatus(answer.status) ? answer.status : undefined;
  return { type: 'cancel_rejected_terminal', epoch, generation, ...(status === undefined ? {} : { status }) };
}

/** `not_found` is the task answering 404; every other failure is retried with back-off (C6). */
export function requestFailed(request: RetriedRequest, error: unknown, epoch: number): OperationEvent {
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof WireFailure) {
    if (error.kind === 'not_found') {
      return {
        type: 'not_found',
        epoch,
        request,
        ...(error.afterExpiry === true ? { afterExpiry: true } : {}),
        ...(error.note === undefined ? {} : { note: error.note }),
      };
    }
    if (error.kind === 'throttled') {
      return {
        type: 'request_failed',
        epoch,
        request,
        code: error.httpStatus === 503 ? 503 : 429,
        ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
        reason,
      };
    }
  }
  return { type: 'request_failed', epoch, request, code: 'network', reason };
}

function isTerminalStatus(status: string | null | undefined): status is TerminalStatus {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}
