/**
 * The 2026-07-28 Tasks extension, client side, as pure decoders (reference 2.1-2.6): the flat
 * `CreateTaskResult`, `tasks/get`'s `DetailedTask` with the inlined result or error, our lookup
 * answer, and the empty acks.
 */
import type { KeyLookupAnswer, ResultAnswer, SubmitAnswer, TaskSnapshot } from '../../wire-port.js';
import { callToolResult } from '../call-tool-result.js';
import { isRecord, malformed } from '../rpc-error.js';
import { decodeSnapshot, MODERN_FIELDS } from '../snapshot.js';

export function decodeCreate(result: Record<string, unknown>): SubmitAnswer {
  if (result.resultType === 'task') return { kind: 'task', ...decodeSnapshot(result, MODERN_FIELDS) };
  if (result.resultType === 'input_required') {
    // MRTR before the task exists (reference 2.1): an input round; the call is retried with the answers.
    const requests = result.inputRequests;
    const state = result.requestState;
    if (requests !== undefined && !isRecord(requests)) throw malformed('inputRequests is not an object');
    if (state !== undefined && typeof state !== 'string') throw malformed('requestState is not a string');
    if (requests === undefined && state === undefined)
      throw malformed('input_required with neither inputRequests nor requestState');
    return {
      kind: 'input_required',
      inputRequests: { ...(requests ?? {}) },
      ...(state === undefined ? {} : { requestState: state }),
    };
  }
  if (result.resultType === undefined || result.resultType === 'complete') {
    if (!Array.isArray(result.content)) throw malformed('synchronous tools/call result without content');
    return { kind: 'immediate', result: callToolResult(stripResultType(result), 'tools/call answer') };
  }
  throw malformed(`unknown resultType ${JSON.stringify(result.resultType)}`);
}

export function decodeStatus(result: Record<string, unknown>, taskId: string): TaskSnapshot {
  const snapshot = decodeSnapshot(result, MODERN_FIELDS, taskId);
  if (snapshot.status !== 'completed' && snapshot.status !== 'failed' && snapshot.status !== 'cancelled')
    return snapshot;
  // The terminal answer inlines the outcome: kept as the first read of the result (C13). An
  // unreadable one is left out; the fetch that follows decides on it.
  try {
    return { ...snapshot, outcome: decodeOutcome(result, taskId) };
  } catch {
    return snapshot;
  }
}

/** The terminal payload inlined in `tasks/get`; a non-terminal or incomplete answer is `malformed`. */
export function decodeOutcome(result: Record<string, unknown>, taskId: string): ResultAnswer {
  const { status } = decodeSnapshot(result, MODERN_FIELDS, taskId);
  switch (status) {
    case 'completed': {
      const inlined = result.result;
      if (!isRecord(inlined) || !Array.isArray(inlined.content)) {
        throw malformed('completed task without a CallToolResult');
      }
      return { status: 'completed', result: callToolResult(stripResultType(inlined), "the completed task's result") };
    }
    case 'failed': {
      const error = result.error;
      if (!isRecord(error) || typeof error.code !== 'number' || typeof error.message !== 'string') {
        throw malformed('failed task without a JSON-RPC error');
      }
      return {
        status: 'failed',
        error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
      };
    }
    case 'cancelled':
      return { status: 'cancelled' };
    default:
      throw malformed(`result read while the task is ${status}`);
  }
}

export function decodeLookup(result: Record<string, unknown>): KeyLookupAnswer {
  if (result.found === true) return { kind: 'found', ...decodeSnapshot(result.task, MODERN_FIELDS) };
  if (result.found === false && result.neverCreated === true) return { kind: 'never_created' };
  throw malformed('lookup answer is neither found nor never-created');
}

/**
 * The inlined result is the `CallToolResult` the call would have returned; `resultType` is the 2026
 * framing of that result, not part of it, so it is dropped before the digest (the same result read
 * over another wire must give the same digest).
 */
function stripResultType(result: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _framing, ...rest } = result;
  return rest;
}
