/**
 * SEP-1391 (`tools/async/*`, reference section 2), client side, as pure decoders. The operation
 * token is our submission key (the server's `operation.token` doubles as idempotency key), so the
 * token IS the task id on this wire: the status and result RPCs name it, nothing else does.
 *
 * Status spelling: the reference implementation's `canceled` (one l) and the SEP-1686 draft's
 * `cancelled` are both read as `cancelled`. `submitted` is `working` (accepted, not started, L-18).
 * `unknown` is terminal without a result (L-19): it is read as `failed`, the fallback the SEP-1686
 * draft recommends, so the call gets a failed receipt instead of being polled forever.
 */
import type { ResultAnswer, SubmitAnswer, TaskSnapshot, WireStatusAnswer } from '../../wire-port.js';
import { callToolResult } from '../call-tool-result.js';
import { isRecord, malformed, type RpcErrorFailure } from '../rpc-error.js';
import { decodeTaskId } from '../snapshot.js';

/** `data.reason` values of our server's SEP-1391 errors (`src/server/wire/sep-1391/constants.ts`). */
export const SEP_REASONS = {
  invalidToken: 'invalid_token',
  operationCancelled: 'operation_cancelled',
  notCompleted: 'operation_not_completed',
  /** The token's operation existed and its retention (`keepAlive`) ended: not found after expiry. */
  operationExpired: 'operation_expired',
} as const;

/** The code a `failed` receipt carries: SEP-1391 reports a failure as a message only (L-11). */
export const SEP_FAILURE_CODE = -32603;

const STATUS: Readonly<Record<string, WireStatusAnswer>> = {
  submitted: 'working',
  working: 'working',
  input_required: 'input_required',
  completed: 'completed',
  failed: 'failed',
  canceled: 'cancelled',
  cancelled: 'cancelled',
  unknown: 'failed',
};

export function decodeAsyncStatus(value: unknown): WireStatusAnswer {
  const status = typeof value === 'string' ? STATUS[value] : undefined;
  if (status === undefined) throw malformed(`unknown SEP-1391 status ${JSON.stringify(value)}`);
  return status;
}

/** `tools/call` params: the token is the submission key; `keepAlive` in seconds after completion (L-08). */
export function encodeCall(
  tool: string,
  args: Record<string, unknown>,
  token: string,
  keepAliveS: number | undefined,
): Record<string, unknown> {
  return {
    name: tool,
    arguments: args,
    operation: keepAliveS === undefined ? { token } : { token, keepAlive: keepAliveS },
  };
}

/**
 * L-09: `CallToolResult` + `operation: { token, keepAlive, pollFrequency? }`. The task id is the
 * token the server answers with (ours, on a server that honours client tokens). `pollFrequency` is
 * UNCONFIRMED (L-25); read as seconds, the unit of its sibling `keepAlive`, as our server sends it.
 * A result without `operation` is the synchronous answer of a sync tool.
 */
export function decodeAccepted(result: Record<string, unknown>): SubmitAnswer {
  const operation = result.operation;
  if (operation === undefined) {
    if (!Array.isArray(result.content)) throw malformed('tools/call answer is neither an operation nor a result');
    return { kind: 'immediate', result: callToolResult({ ...result }, 'tools/call answer') };
  }
  if (!isRecord(operation) || typeof operation.token !== 'string' || operation.token === '') {
    throw malformed('operation without a token');
  }
  decodeTaskId(operation.token, 'operation.token');
  const poll = operation.pollFrequency;
  return {
    kind: 'task',
    taskId: operation.token,
    status: 'working',
    ...(typeof poll === 'number' && Number.isFinite(poll) && poll > 0 ? { pollIntervalMs: poll * 1000 } : {}),
  };
}

/** L-11: `{ status, error? }`; the failure message becomes the status message. */
export function decodeStatus(result: Record<string, unknown>, token: string): TaskSnapshot {
  const status = decodeAsyncStatus(result.status);
  const error = typeof result.error === 'string' ? result.error : undefined;
  return { taskId: token, status, ...(error === undefined ? {} : { statusMessage: error }) };
}

/** L-10: `{ result: CallToolResult }`, wrapped. A tool's own `isError` result stays a completed result. */
export function decodeResult(result: Record<string, unknown>): ResultAnswer {
  const inner = result.result;
  if (!isRecord(inner) || !Array.isArray(inner.content)) throw malformed('tools/async/result without a CallToolResult');
  return { status: 'completed', result: callToolResult({ ...inner }, 'tools/async/result') };
}

/** A terminal status read where a result was asked for: the answer it stands for, else null. */
export function outcomeOfStatus(status: WireStatusAnswer, message: string | undefined): ResultAnswer | null {
  if (status === 'cancelled') return { status: 'cancelled' };
  if (status === 'failed') {
    return { status: 'failed', error: { code: SEP_FAILURE_CODE, message: message ?? 'Operation failed' } };
  }
  return null;
}

/** `data.status` / `data.error` our server puts on `-32600` (not completed) and `-32602` (cancelled). */
export function statusInError(error: RpcErrorFailure): Pick<TaskSnapshot, 'status' | 'statusMessage'> | undefined {
  const data = error.rpcData;
  if (!isRecord(data) || data.status === undefined) return undefined;
  const status = decodeAsyncStatus(data.status);
  return typeof data.error === 'string' ? { status, statusMessage: data.error } : { status };
}
