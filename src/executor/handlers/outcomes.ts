/**
 * Moves shared by several handlers: into TERMINAL_OBSERVED, the receipt-writing states, UNKNOWN and
 * EFFECT_RECONCILIATION_REQUIRED, and back to a found task.
 */
import { isTerminal, type TerminalStatus } from '../../core/task.js';
import type { Acceptance } from '../effects.js';
import type { InputState, ReceiptStatus, ServerReport, ToolOperation, Evidence, WireStatus } from '../operation.js';
import { immediate, nextPoll, throttled } from '../schedule.js';
import { rejected, type Draft, type StepResult } from '../step.js';
import { changeOf, noteTerminal, type Change } from './changed.js';

export function acceptanceOf(
  record: ToolOperation,
  taskId: string,
  status: ReceiptStatus,
  payload: unknown,
  resultDigest: string | null,
): Acceptance {
  return {
    operationId: record.id,
    callNodeId: record.callNodeId,
    requestDigest: record.requestDigest,
    taskId,
    toolVersion: record.tool.descriptorVersion,
    executionEpoch: record.executionEpoch,
    cancelGeneration: record.cancelGeneration,
    status,
    resultDigest,
    payload,
  };
}

/** Closes any open input round; answered keys are kept so replays stay ignored (C10). */
export function closeRound(input: InputState): InputState {
  if (Object.keys(input.pending).length === 0 && Object.keys(input.unsent).length === 0) return input;
  return { ...input, pending: {}, unsent: {} };
}

/**
 * A terminal status was seen: fetch before accepting anything (C2). Another terminal status than
 * the one observed first is never followed (C13). `resultDigest`: the result the answer inlined.
 */
export function observeTerminal(d: Draft, status: TerminalStatus, resultDigest?: string): StepResult {
  const change = changeOf(d, status, resultDigest);
  if (change !== null) return changed(d, change);
  noteTerminal(d, status, resultDigest);
  d.set({ lastServerStatus: status, input: closeRound(d.record.input) }).moveTo('TERMINAL_OBSERVED');
  return d.wake(immediate(d.record, d.now)).done();
}

/** The server proved the task cancelled (cancel answer or status): the cancelled receipt. */
export function acceptCancelled(d: Draft): StepResult {
  const taskId = d.record.taskId;
  if (taskId === null) return rejected(d.base, 'no_task_id');
  // A completion observed first is never rewritten into a cancel (C13).
  const change = changeOf(d, 'cancelled');
  if (change !== null) return changed(d, change);
  noteTerminal(d, 'cancelled');
  d.set({ lastServerStatus: 'cancelled', input: closeRound(d.record.input) })
    .clearWake()
    .moveTo('CANCELLED_ACCEPTED');
  return d
    .emit({ type: 'accept_terminal', acceptance: acceptanceOf(d.record, taskId, 'cancelled', null, null) })
    .done();
}

/** 404 after expiry with a terminal status already observed: receipt of kind `expired`, no success payload. */
export function acceptExpired(d: Draft, observedStatus: WireStatus | null): StepResult {
  const taskId = d.record.taskId;
  if (taskId === null) return rejected(d.base, 'no_task_id');
  d.clearWake().moveTo('EXPIRED_WITH_RECEIPT');
  const acceptance = acceptanceOf(d.record, taskId, 'expired', { observedStatus }, null);
  return d.emit({ type: 'accept_terminal', acceptance }).done();
}

/** The server contradicted itself: UNKNOWN, both reports kept, nothing accepted, no lookup. */
export function changed(d: Draft, change: Change): StepResult {
  const what = change.kind === 'result_changed' ? 'result digest' : 'status';
  const detail =
    `server reported ${describe(change.reported)} after ${describe(change.observed)}: the ${what} changed ` +
    'after it was observed; not followed, left for an operator';
  return toUnknown(d, change.kind, detail, false, { observed: change.observed, reported: change.reported });
}

function describe(r: ServerReport): string {
  const digest = r.resultDigest === undefined ? '' : ` (result ${r.resultDigest.slice(0, 12)})`;
  return `${r.status ?? '?'}${digest} at ${new Date(r.at).toISOString()}`;
}

/** Into UNKNOWN with evidence (C4); `lookup` tries an automatic reconciliation by key first. */
export function toUnknown(
  d: Draft,
  kind: Evidence['kind'],
  detail: string,
  lookup: boolean,
  reports?: Pick<Evidence, 'observed' | 'reported'>,
): StepResult {
  const evidence = d.addEvidence(kind, detail, reports);
  d.set({ input: closeRound(d.record.input) })
    .clearWake()
    .moveTo('UNKNOWN')
    .emit({ type: 'record_unknown', evidence });
  if (!lookup) return d.done();
  // Inside a Retry-After the lookup waits for its end (C6); the wake in UNKNOWN issues it.
  if (throttled(d.record, d.now) && d.record.attempts.reconcile < d.record.policy.maxReconcileLookups) {
    return d.wake(immediate(d.record, d.now)).done();
  }
  reconcileByKey(d);
  return d.done();
}

/**
 * Issues a key lookup from UNKNOWN if the policy allows another; returns whether it did. Only an
 * answer spends one of `maxReconcileLookups` (`countReconciled`): a lookup lost on the wire told
 * nothing and is retried with the back-off. Counted at the send, two lost to a server outage and one
 * to an executor crash used all three, and a cancel-owed operation the server could still settle was
 * left for an operator with no request for 180-263 s (cancel cadence: gate seeds 168549, 237087,
 * 296580, 307973).
 */
export function reconcileByKey(d: Draft): boolean {
  if (d.record.attempts.reconcile >= d.record.policy.maxReconcileLookups) return false;
  // C12: a call that ran (or may have) without its key: the lookup could only say "never created".
  if (d.record.taskId === null && keyNeverNamedTheCall(d.record)) return false;
  d.countAttempt('lookup');
  d.emit({ type: 'lookup_key', submissionKey: d.record.submissionKey });
  return true;
}

/** A key lookup answered in UNKNOWN: one reconciling lookup spent (`reconcileByKey`). */
export function countReconciled(d: Draft): Draft {
  return d.base.state === 'UNKNOWN' ? d.countAttempt('reconcile') : d;
}

/** Completion seen after a won cancel: flag it, never accept it (C3). The cancelled receipt stands. */
export function lateEffect(d: Draft, detail: string, reported?: WireStatus): StepResult {
  const first = d.record.observedTerminal ?? null;
  const reports =
    reported === undefined
      ? undefined
      : {
          observed: { status: 'cancelled', at: first?.at ?? d.record.updatedAt },
          reported: { status: reported, at: d.now },
        };
  const evidence = d.addEvidence('late_completion', detail, reports);
  d.moveTo('EFFECT_RECONCILIATION_REQUIRED');
  return d.emit({ type: 'record_late_effect', evidence }).done();
}

/** The server answered with a task (creation or key lookup): back to waiting on it. */
export function rediscovered(
  d: Draft,
  sighting: {
    readonly taskId: string;
    readonly status: WireStatus;
    readonly pollIntervalMs?: number;
    readonly expiresAt?: number | null;
    readonly serverEpoch?: number;
    /** The result the answer inlined: a report of it, as a status read's (C13). */
    readonly resultDigest?: string;
  },
): StepResult {
  const r = d.record;
  // Found again, but not as first observed (another terminal status, working again, another result): C13.
  const change = changeOf(d, sighting.status, sighting.resultDigest);
  if (change !== null) return changed(d, change);
  d.set({
    taskId: sighting.taskId,
    lastServerStatus: sighting.status,
    pollIntervalMs: sighting.pollIntervalMs ?? r.pollIntervalMs,
    expiresAt: sighting.expiresAt === undefined ? r.expiresAt : sighting.expiresAt,
    serverEpoch: maxEpoch(r.serverEpoch, sighting.serverEpoch),
    // Whatever was on the wire before the doubt is not waited for (its answer may never come).
    cancelSentAt: null,
  }).resetFailures();
  // A cancel requested before the doubt (generation > 0) is still owed: the wake resends it (C8).
  const cancelling = r.cancelGeneration > 0;
  // The answer already shows the task terminal: fetch its result now, not after reading the status
  // again (that extra read, after each 404 and lookup, broke the per-operation cap: gate seed 36362).
  // So also a completion with a cancel owed: it beat the cancel and is fetched, as a status read in
  // CANCEL_REQUESTED would have it. Reading the status first cost AIP-151 seed 8310 two more reads,
  // 6 in one second (C6). A `cancelled` sighting is still confirmed by a status read below (a found
  // doubt takes no receipt-writing move).
  if (isCompletion(sighting.status) || (!cancelling && isTerminal(sighting.status))) {
    return observeTerminal(d, sighting.status as TerminalStatus, sighting.resultDigest);
  }
  d.moveTo(cancelling ? 'CANCEL_REQUESTED' : 'WORKING');
  const plan =
    sighting.status === 'working' && !cancelling ? nextPoll(d.record, d.now, d.random) : immediate(d.record, d.now);
  return d.wake(plan).done();
}

export function maxEpoch(current: number | null, seen: number | undefined): number | null {
  if (seen === undefined) return current;
  return current === null ? seen : Math.max(current, seen);
}

export function isStaleServerEpoch(record: ToolOperation, seen: number | undefined): boolean {
  return seen !== undefined && record.serverEpoch !== null && seen < record.serverEpoch;
}

export function isCompletion(status: WireStatus | undefined): boolean {
  return status === 'completed' || status === 'failed';
}

/**
 * The call ran, or may have run, without its key ever naming it (C12): a synchronous answer that did
 * not verify, or a plain call whose answer was lost. No lookup of the key can settle it.
 */
export function keyNeverNamedTheCall(record: ToolOperation): boolean {
  return record.evidence.some(
    (e) => e.kind === 'result_unverifiable' || e.kind === 'plain_call_lost' || e.kind === 'plain_call_sent',
  );
}
