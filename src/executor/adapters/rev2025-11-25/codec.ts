/**
 * The experimental tasks of MCP 2025-11-25 (reference section 1), client side, as pure decoders:
 * `CreateTaskResult` nests the task (`{ task }`), `tasks/get` and `tasks/cancel` answer the flat
 * task, and `tasks/result` answers exactly what the call would have returned, tagged with the
 * related-task `_meta` (T-41).
 */
import type { ResultAnswer, SubmitAnswer, TaskSnapshot } from '../../wire-port.js';
import { callToolResult } from '../call-tool-result.js';
import { RELATED_TASK_META } from '../envelope.js';
import { isRecord, malformed, type RpcErrorFailure } from '../rpc-error.js';
import { decodeSnapshot, LEGACY_FIELDS } from '../snapshot.js';

export function decodeCreate(result: Record<string, unknown>): SubmitAnswer {
  if (result.task !== undefined) return { kind: 'task', ...decodeSnapshot(result.task, LEGACY_FIELDS) };
  if (!Array.isArray(result.content)) throw malformed('tools/call answer is neither a task nor a CallToolResult');
  return { kind: 'immediate', result: callToolResult(withoutRelatedTask(result), 'tools/call answer') };
}

export function decodeStatus(result: Record<string, unknown>, taskId: string): TaskSnapshot {
  return decodeSnapshot(result, LEGACY_FIELDS, taskId);
}

/**
 * A successful `tasks/result`. In 2025-11-25 a tool result with `isError: true` makes the task
 * `failed` while `tasks/result` still answers that `CallToolResult` (T-24); such a result becomes the
 * `failed` answer's error (`-32603`, the result in `data.callToolResult`) so a failed receipt always
 * carries an error object, whichever wire it came from.
 */
export function decodeResult(result: Record<string, unknown>): ResultAnswer {
  const related = isRecord(result._meta) ? result._meta[RELATED_TASK_META] : undefined;
  if (related !== undefined && !isRecord(related)) throw malformed('related-task _meta is not an object');
  const answer = callToolResult(withoutRelatedTask(result), 'tasks/result answer');
  if (result.isError === true) {
    return {
      status: 'failed',
      error: { code: -32603, message: toolErrorText(answer), data: { callToolResult: answer } },
    };
  }
  return { status: 'completed', result: answer };
}

/** A JSON-RPC error from `tasks/result` of a task known to exist: the underlying request's error (T-40). */
export function decodeResultError(error: RpcErrorFailure): ResultAnswer {
  const code = error.rpcCode ?? -32603;
  return {
    status: 'failed',
    error: { code, message: error.message, ...(error.rpcData === undefined ? {} : { data: error.rpcData }) },
  };
}

/** The related-task tag is framing of the 2025 answer, not part of the result: dropped before the digest. */
function withoutRelatedTask(result: Record<string, unknown>): Record<string, unknown> {
  if (!isRecord(result._meta) || !(RELATED_TASK_META in result._meta)) return { ...result };
  const { [RELATED_TASK_META]: _tag, ...meta } = result._meta;
  const { _meta: _old, ...rest } = result;
  return Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta };
}

function toolErrorText(result: Record<string, unknown>): string {
  const first = Array.isArray(result.content) ? (result.content[0] as unknown) : undefined;
  if (isRecord(first) && typeof first.text === 'string') return first.text;
  return 'tool returned isError';
}
