/**
 * The checks every ledger backend runs inside its write transaction, shared so memory and SQLite
 * cannot drift apart. Pure: they read the stored row (passed in) and throw `TerminusError`.
 */
import { canonicalJson, digestOf } from '../../core/digest.js';
import { TerminusError } from '../../core/errors.js';
import type { AcceptTerminalInput, AppliedStep, OutboxRow, Receipt } from '../ledger-port.js';
import type { ReceiptStatus, ToolOperation } from '../operation.js';
import { canTransition, isReceiptWriting, isReceipted } from '../transitions.js';

/** Fields fixed at creation: a step that changes one is a bug, not a transition. */
const IDENTITY = [
  'schema',
  'id',
  'callNodeId',
  'requestDigest',
  'tool',
  'body',
  'wire',
  'createdAt',
  'shadow',
  'identity',
] as const;

function identityChanged(stored: ToolOperation, next: ToolOperation): string | null {
  for (const field of IDENTITY) {
    if (canonicalJson(stored[field]) !== canonicalJson(next[field])) return field;
  }
  return null;
}

function fenceEpoch(record: ToolOperation, currentEpoch: number): void {
  if (record.executionEpoch !== currentEpoch) {
    throw new TerminusError(
      'lease_lost',
      `operation ${record.id} is at epoch ${record.executionEpoch}, ledger at ${currentEpoch}`,
      {
        details: { operationId: record.id, epoch: record.executionEpoch, currentEpoch },
      },
    );
  }
}

function checkRevision(stored: ToolOperation | null, id: string, expected: number): ToolOperation {
  if (stored === null) throw new TerminusError('not_found', `operation ${id} not found`);
  if (stored.revision !== expected) {
    throw new TerminusError('revision_conflict', `operation ${id} is at revision ${stored.revision}, not ${expected}`, {
      details: { operationId: id, revision: stored.revision, expected },
    });
  }
  return stored;
}

export function checkCreate(record: ToolOperation, currentEpoch: number): void {
  if (record.state !== 'SUBMITTING' || record.history.length > 0) {
    throw new TerminusError('invalid_argument', 'a new operation starts in SUBMITTING with no history');
  }
  fenceEpoch(record, currentEpoch);
}

/** Same call node again: the existing operation if the request matches (C5), else a conflict. */
export function checkRecreate(existing: ToolOperation, record: ToolOperation): void {
  if (existing.requestDigest !== record.requestDigest) {
    throw new TerminusError('operation_conflict', `call node ${record.callNodeId} exists with another request`, {
      details: { callNodeId: record.callNodeId, operationId: existing.id },
    });
  }
}

export function keyConflict(key: string, owner: string): TerminusError {
  return new TerminusError('operation_conflict', `submission key already used by operation ${owner}`, {
    details: { submissionKey: key, operationId: owner },
  });
}

/** Validates a non-accepting step and returns the record to store. */
export function checkApply(stored: ToolOperation | null, step: AppliedStep, currentEpoch: number): ToolOperation {
  const before = checkRevision(stored, step.record.id, step.expectedRevision);
  const next = step.record;
  fenceEpoch(next, currentEpoch);
  const changed = identityChanged(before, next);
  if (changed !== null) throw new TerminusError('invalid_argument', `apply may not change ${changed}`);
  if (before.state !== next.state) {
    if (!canTransition(before.state, next.state)) {
      throw new TerminusError('invalid_argument', `transition ${before.state} -> ${next.state} is not allowed`);
    }
    if (isReceiptWriting(next.state)) {
      throw new TerminusError('invalid_argument', `${next.state} is entered only through acceptTerminal`);
    }
  }
  if (isReceipted(before.state) && !isReceipted(next.state)) {
    throw new TerminusError('invalid_argument', 'a receipted operation never leaves the receipted states');
  }
  return { ...next, revision: before.revision + 1 };
}

const STATUSES_BY_STATE: Record<string, readonly ReceiptStatus[]> = {
  ACCEPTED: ['completed', 'failed', 'cancelled'],
  CANCELLED_ACCEPTED: ['cancelled'],
  EXPIRED_WITH_RECEIPT: ['expired'],
};

function mismatch(what: string): TerminusError {
  return new TerminusError('acceptance_mismatch', `acceptTerminal: ${what}`);
}

function payloadDigest(payload: unknown): string | null {
  try {
    return digestOf(payload ?? null);
  } catch {
    return null;
  }
}

/**
 * Validates an acceptance against the stored operation (not against the caller's new record alone)
 * and returns what to write. The caller has already returned an existing receipt, if any (C1).
 */
export function checkAcceptance(
  stored: ToolOperation | null,
  input: AcceptTerminalInput,
  currentEpoch: number,
): { readonly record: ToolOperation; readonly receipt: Receipt; readonly outbox: Omit<OutboxRow, 'id'> | null } {
  const { acceptance: a, record: next } = input;
  const before = checkRevision(stored, next.id, input.expectedRevision);
  fenceEpoch(before, currentEpoch);
  if (a.executionEpoch !== before.executionEpoch || next.executionEpoch !== before.executionEpoch) {
    throw new TerminusError(
      'lease_lost',
      `acceptance from epoch ${a.executionEpoch}, operation at ${before.executionEpoch}`,
    );
  }
  if (a.operationId !== before.id) throw mismatch('operation id');
  if (a.callNodeId !== before.callNodeId) throw mismatch('call node');
  if (a.requestDigest !== before.requestDigest) throw mismatch('request digest');
  // C12: a synchronous answer has no task; it may only settle a submission still waiting for its answer.
  const immediate = a.immediate === true;
  if (immediate) {
    if (before.state !== 'SUBMITTING' || before.taskId !== null || next.taskId !== null || a.taskId !== '') {
      throw mismatch('immediate answer to an operation that is not awaiting its submission');
    }
    if (a.status !== 'completed') throw mismatch(`immediate answer with status ${a.status}`);
  } else if (before.taskId === null || a.taskId !== before.taskId || next.taskId !== before.taskId) {
    throw mismatch('task id');
  }
  if (a.toolVersion !== before.tool.descriptorVersion) throw mismatch('tool version');
  if (a.cancelGeneration !== before.cancelGeneration || next.cancelGeneration !== before.cancelGeneration) {
    throw mismatch('cancel generation');
  }
  const changed = identityChanged(before, next);
  if (changed !== null) throw mismatch(`record changes ${changed}`);
  if (!isReceiptWriting(next.state) || !canTransition(before.state, next.state)) {
    throw mismatch(`transition ${before.state} -> ${next.state}`);
  }
  if (!(STATUSES_BY_STATE[next.state] ?? []).includes(a.status)) throw mismatch(`status ${a.status} for ${next.state}`);
  if (next.state === 'ACCEPTED' && !immediate && a.status !== before.lastServerStatus) {
    throw mismatch(`status ${a.status} but the server reported ${String(before.lastServerStatus)}`);
  }
  // C2: a completed/failed receipt carries the digest of a payload that hashes to it.
  if ((a.status === 'completed' || a.status === 'failed') && a.resultDigest === null)
    throw mismatch('missing result digest');
  if (a.resultDigest !== null && payloadDigest(a.payload) !== a.resultDigest) throw mismatch('result digest');
  if (next.resultDigest !== a.resultDigest && a.resultDigest !== null) throw mismatch('record result digest');

  const receipt: Receipt = {
    id: input.receiptId,
    callNodeId: before.callNodeId,
    operationId: before.id,
    taskId: before.taskId ?? '',
    status: a.status,
    resultDigest: a.resultDigest,
    payload: a.payload ?? null,
    epoch: before.executionEpoch,
    cancelGeneration: before.cancelGeneration,
    shadow: before.shadow,
    acceptedAt: input.now,
    ...(immediate ? { immediate: true } : {}),
  };
  const outbox = before.shadow
    ? null
    : {
        receiptId: receipt.id,
        callNodeId: receipt.callNodeId,
        operationId: receipt.operationId,
        status: receipt.status,
        createdAt: input.now,
        acknowledgedAt: null,
      };
  return { record: { ...next, revision: before.revision + 1 }, receipt, outbox };
}
