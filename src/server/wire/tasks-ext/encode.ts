import type { InputRequest, RpcError, TaskRecord, TaskStatus } from '../../../core/task.js';
import { eventsMeta } from '../../task-events.js';
import { PROGRESS_META, RELATED_TASK_META, SUBMISSION_META } from './constants.js';

/**
 * Encoding: `TaskRecord` -> the 2026-07-28 Tasks extension shapes. Pure. Field rules (reference 2.2,
 * 2.4): ISO 8601 times, `ttlMs` integer or null (never absent), `pollIntervalMs` a positive integer
 * or absent, no 2025 keys (`ttl`, `pollInterval`, nested `task`), no `requestState` anywhere.
 */

/** The `Task` fields shared by `CreateTaskResult`, `tasks/get` and the lookup answer. */
export type WireTask = {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
};

/** `tasks/get`'s `DetailedTask`: the task plus what its status carries. */
export type DetailedTask = WireTask & {
  inputRequests?: Record<string, InputRequest>;
  result?: Record<string, unknown>;
  error?: RpcError;
  _meta?: Record<string, unknown>;
};

export type CreateTaskResult = WireTask & { resultType: 'task'; _meta?: Record<string, unknown> };
export type GetTaskResult = DetailedTask & { resultType: 'complete' };
export type Ack = { resultType: 'complete' };
export type LookupResult =
  | { resultType: 'complete'; found: true; task: DetailedTask }
  | { resultType: 'complete'; found: false; neverCreated: true };

function positiveInteger(value: number | null): number | undefined {
  return value !== null && Number.isFinite(value) && value >= 1 ? Math.round(value) : undefined;
}

function statusMessageOf(task: TaskRecord): string | undefined {
  const p = task.progress;
  // A finished task still carrying its last progress line ("computing") would mislead a reader.
  const stale = task.status === 'completed' && p !== null && task.statusMessage === p.message;
  if (task.statusMessage !== null && task.statusMessage !== '' && !stale) return task.statusMessage;
  if (p === null || task.status !== 'working') return undefined;
  const amount = p.total === undefined ? `${p.done}` : `${p.done}/${p.total}`;
  return p.message === undefined ? amount : `${amount}: ${p.message}`;
}

export function encodeTask(task: TaskRecord): WireTask {
  const wire: WireTask = {
    taskId: task.id,
    status: task.status,
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.updatedAt).toISOString(),
    // A ttl of 0 or less cannot be expressed (the suite requires null or a positive integer).
    ttlMs: task.ttlMs === null ? null : (positiveInteger(task.ttlMs) ?? 1),
  };
  const message = statusMessageOf(task);
  if (message !== undefined) wire.statusMessage = message;
  const poll = positiveInteger(task.pollIntervalMs);
  if (poll !== undefined) wire.pollIntervalMs = poll;
  return wire;
}

/** The flat `CreateTaskResult`; `created: false` marks a deduplicated submission (S5). */
export function encodeCreateTaskResult(task: TaskRecord, created = true): CreateTaskResult {
  return { resultType: 'task', ...encodeTask(task), _meta: { [SUBMISSION_META]: { created } } };
}

/**
 * The inlined `result` of a completed task: exactly the `CallToolResult`, with `resultType:
 * "complete"` (the ext-tasks client rejects it otherwise) and without the 2025 related-task key.
 */
export function encodeInlinedResult(result: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...result, resultType: 'complete' };
  const meta = result._meta;
  if (meta !== null && typeof meta === 'object' && RELATED_TASK_META in meta) {
    const { [RELATED_TASK_META]: _dropped, ...rest } = meta as Record<string, unknown>;
    if (Object.keys(rest).length === 0) delete out._meta;
    else out._meta = rest;
  }
  return out;
}

/** `DetailedTask`: per-status fields only (X-15..X-20, X-50, X-54). */
export function encodeDetailedTask(task: TaskRecord): DetailedTask {
  const detailed: DetailedTask = encodeTask(task);
  switch (task.status) {
    case 'input_required':
      detailed.inputRequests = { ...task.inputRequests };
      break;
    case 'completed':
      detailed.result = encodeInlinedResult(task.result ?? { content: [] });
      break;
    case 'failed':
      detailed.error = task.error ?? { code: -32603, message: task.statusMessage ?? 'Task failed' };
      if (detailed.statusMessage === undefined) detailed.statusMessage = detailed.error.message;
      break;
    default:
      break;
  }
  // Where the task's ordered events stand (issue 32), so a client resumes `terminus/tasks/events` from here.
  detailed._meta = eventsMeta(task);
  if (task.status === 'working' && task.progress !== null) {
    detailed._meta = { ...detailed._meta, [PROGRESS_META]: { ...task.progress } };
  }
  return detailed;
}

/** The `tasks/get` result: `resultType` MUST be "complete". */
export function encodeGetTaskResult(task: TaskRecord): GetTaskResult {
  return { resultType: 'complete', ...encodeDetailedTask(task) };
}

/** The empty acknowledgement of `tasks/update` and `tasks/cancel`. */
export function encodeAck(): Ack {
  return { resultType: 'complete' };
}

export function encodeLookupFound(task: TaskRecord): LookupResult {
  return { resultType: 'complete', found: true, task: encodeDetailedTask(task) };
}

export function encodeLookupNeverCreated(): LookupResult {
  return { resultType: 'complete', found: false, neverCreated: true };
}
