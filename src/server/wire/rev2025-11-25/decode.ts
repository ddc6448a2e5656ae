import { REASONS } from './constants.js';
import { invalidParams, taskNotFoundError } from './errors.js';
import { isRecord } from '../../../core/json.js';
import { WEBHOOK_META } from '../tasks-ext/constants.js';
export { isRecord } from '../../../core/json.js';

/**
 * Decoding: 2025-11-25 params -> engine command inputs. Pure; every bad parameter is a `-32602`
 * naming it. On this wire the SDK's fallback handler sees raw params (no validation), so the shapes
 * are checked here in full.
 */

/** Ours are 22 characters; anything longer is answered "not found" unread (S8). */
const MAX_TASK_ID_LENGTH = 256;

export interface TaskRef {
  readonly taskId: string;
}

/** `tools/call` as this wire reads it. `task` is present only on a task-augmented call (T-14). */
export interface LegacyToolCall {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly task: { readonly ttlMs: number | null | undefined } | undefined;
  readonly progressToken: string | number | undefined;
  /** `_meta["mcp-terminus.dev/webhook"]` as sent (as on the Tasks extension); the engine decodes and checks it. */
  readonly webhook: unknown;
}

export interface ListInput {
  readonly cursor: string | undefined;
}

function paramsObject(params: unknown): Record<string, unknown> {
  if (params === undefined) return {};
  if (!isRecord(params)) throw invalidParams('params must be an object');
  return params;
}

/**
 * `{ taskId }` of `tasks/get|result|cancel`. Related-task `_meta` on these requests is ignored:
 * `params.taskId` is the only source of truth (T-44).
 */
export function decodeTaskRef(params: unknown): TaskRef {
  const { taskId } = paramsObject(params);
  if (taskId === undefined) throw invalidParams('taskId is required');
  if (typeof taskId !== 'string') throw invalidParams('taskId must be a string');
  if (taskId.length === 0 || taskId.length > MAX_TASK_ID_LENGTH) throw taskNotFoundError();
  return { taskId };
}

/** `tasks/list` params: `{ cursor? }` (T-58: the cursor is passed through opaque). */
export function decodeList(params: unknown): ListInput {
  const { cursor } = paramsObject(params);
  if (cursor === undefined) return { cursor: undefined };
  if (typeof cursor !== 'string' || cursor.length === 0) {
    throw invalidParams('cursor must be a non-empty string', REASONS.invalidCursor);
  }
  return { cursor };
}

/**
 * `tools/call` params: `{ name, arguments?, task?: { ttl? }, _meta?: { progressToken? } }`. `ttl` is
 * milliseconds from creation (reference 1.4); `null` asks for unlimited retention.
 */
export function decodeToolCall(params: unknown): LegacyToolCall {
  const p = paramsObject(params);
  if (typeof p.name !== 'string' || p.name.length === 0) throw invalidParams('name must be a non-empty string');
  const args = p.arguments ?? {};
  if (!isRecord(args)) throw invalidParams('arguments must be an object', REASONS.invalidArguments);
  const meta = isRecord(p._meta) ? p._meta : {};
  const token = meta.progressToken;
  const progressToken = typeof token === 'string' || typeof token === 'number' ? token : undefined;
  return { tool: p.name, args, task: decodeTaskMetadata(p.task), progressToken, webhook: meta[WEBHOOK_META] };
}

function decodeTaskMetadata(task: unknown): LegacyToolCall['task'] {
  if (task === undefined) return undefined;
  if (!isRecord(task)) throw invalidParams('task must be an object');
  const { ttl } = task;
  if (ttl === undefined || ttl === null) return { ttlMs: ttl };
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0) {
    throw invalidParams('task.ttl must be a non-negative integer number of milliseconds');
  }
  return { ttlMs: ttl };
}
