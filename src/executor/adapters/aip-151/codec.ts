/**
 * AIP-151 (`google.longrunning.Operation` over HTTP/JSON, reference section 3), client side, as pure
 * decoders. The task id is the `{id}` of `Operation.name = "operations/{id}"` (G-19). Status,
 * progress, times and the poll hint live in our `metadata` (`mcp_terminus.v1.TaskMetadata`); a
 * server without it still decodes: `done=false` is `working`, `done=true` is read from the result.
 */
import type { ResultAnswer, SubmitAnswer, TaskSnapshot, WireStatusAnswer } from '../../wire-port.js';
import { isRecord, malformed } from '../rpc-error.js';

export const OPERATION_PREFIX = 'operations/';
/** `google.rpc.Code.CANCELLED`: how a cancelled operation ends (G-24). */
export const CANCELLED_CODE = 1;
/** Our detail on a failed operation's `error`: the task's original JSON-RPC error. */
export const JSONRPC_ERROR_TYPE = 'type.googleapis.com/mcp_terminus.v1.JsonRpcError';

export interface DecodedOperation {
  readonly id: string;
  readonly done: boolean;
  readonly metadata: Record<string, unknown>;
  readonly error?: Record<string, unknown>;
  readonly response?: Record<string, unknown>;
}

/** Throws `malformed` unless the body is an Operation (G-20: `done` decides which of error/response). */
export function decodeOperation(body: unknown, expectedId?: string): DecodedOperation {
  if (!isRecord(body)) throw malformed('operation is not an object');
  const { name, done, error, response } = body;
  if (typeof name !== 'string' || !name.startsWith(OPERATION_PREFIX) || name.length === OPERATION_PREFIX.length) {
    throw malformed(`operation name ${JSON.stringify(name)} is not operations/{id}`);
  }
  const id = name.slice(OPERATION_PREFIX.length);
  if (expectedId !== undefined && id !== expectedId) throw malformed(`answer is about ${id}, not ${expectedId}`);
  // proto3 JSON omits a false bool.
  const isDone = done === true;
  if (done !== undefined && typeof done !== 'boolean') throw malformed('operation.done is not a boolean');
  if (error !== undefined && !isRecord(error)) throw malformed('operation.error is not a google.rpc.Status');
  if (response !== undefined && !isRecord(response)) throw malformed('operation.response is not an object');
  if (!isDone && (error !== undefined || response !== undefined))
    throw malformed('operation not done but has a result');
  if (isDone && (error === undefined) === (response === undefined)) {
    throw malformed('done operation must carry exactly one of error and response');
  }
  if (error !== undefined && typeof error.code !== 'number') throw malformed('operation.error has no numeric code');
  return {
    id,
    done: isDone,
    metadata: isRecord(body.metadata) ? body.metadata : {},
    ...(error === undefined ? {} : { error }),
    ...(response === undefined ? {} : { response }),
  };
}

function statusOf(op: DecodedOperation): WireStatusAnswer {
  if (op.response !== undefined) return 'completed';
  if (op.error !== undefined) return op.error.code === CANCELLED_CODE ? 'cancelled' : 'failed';
  return op.metadata.status === 'input_required' ? 'input_required' : 'working';
}

/** `google.protobuf.Duration` JSON (`"1.5s"`) in ms, or undefined. */
export function durationMs(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+(?:\.\d{1,9})?)s$/.exec(value);
  return match === null ? undefined : Math.round(Number(match[1]) * 1000);
}

/**
 * The task an Operation shows. A done one inlines its outcome (G-20): kept as the first read of the
 * result, which the fetch (another `GetOperation`) is compared with (C13); an unreadable one is left
 * out, and the fetch decides on it.
 */
export function toSnapshot(op: DecodedOperation): TaskSnapshot {
  const snapshot: { -readonly [K in keyof TaskSnapshot]: TaskSnapshot[K] } = { taskId: op.id, status: statusOf(op) };
  if (op.done) {
    try {
      snapshot.outcome = toResult(op);
    } catch {
      // Left out: the fetch reads it again.
    }
  }
  const { metadata } = op;
  if (typeof metadata.statusMessage === 'string') snapshot.statusMessage = metadata.statusMessage;
  else if (op.error !== undefined && typeof op.error.message === 'string') snapshot.statusMessage = op.error.message;
  const poll = durationMs(metadata.pollInterval);
  if (poll !== undefined && poll > 0) snapshot.pollIntervalMs = poll;
  const expires = typeof metadata.expireTime === 'string' ? Date.parse(metadata.expireTime) : Number.NaN;
  if (!Number.isNaN(expires)) snapshot.expiresAt = expires;
  const progress = metadata.progress;
  if (isRecord(progress) && typeof progress.done === 'number') {
    snapshot.progress =
      typeof progress.total === 'number' ? { done: progress.done, total: progress.total } : { done: progress.done };
  }
  return snapshot;
}

export function toSubmitAnswer(op: DecodedOperation): SubmitAnswer {
  return { kind: 'task', ...toSnapshot(op) };
}

/**
 * The outcome of a done operation. `response` minus its `@type` is the `CallToolResult`; an `error`
 * with code 1 is the cancel (G-24); any other error is a failure, carrying the task's JSON-RPC error
 * when the server attached it (ours does), so the receipt matches the one the MCP wires give.
 */
export function toResult(op: DecodedOperation): ResultAnswer {
  if (op.response !== undefined) {
    const { '@type': _type, ...result } = op.response;
    if (!Array.isArray(result.content)) throw malformed('operation.response is not a CallToolResult');
    return { status: 'completed', result };
  }
  const error = op.error;
  if (error === undefined) throw malformed('result read while the operation is not done');
  if (error.code === CANCELLED_CODE) return { status: 'cancelled' };
  const details = Array.isArray(error.details) ? (error.details as unknown[]) : [];
  const original = details.find((d) => isRecord(d) && d['@type'] === JSONRPC_ERROR_TYPE);
  if (isRecord(original) && typeof original.code === 'number' && typeof original.message === 'string') {
    return {
      status: 'failed',
      error: {
        code: original.code,
        message: original.message,
        ...(original.data === undefined ? {} : { data: original.data }),
      },
    };
  }
  const message = typeof error.message === 'string' ? error.message : 'Operation failed';
  return { status: 'failed', error: { code: error.code as number, message, data: { rpcStatus: error } } };
}
