import type { RpcError, TaskRecord, TaskStatus } from '../../../core/task.js';
import { RELATED_TASK_META } from './constants.js';

/**
 * Encoding: `TaskRecord` -> 2025-11-25 shapes (reference 1.5-1.9). Pure. Field rules: ISO 8601
 * times (T-32, T-33), `ttl` always present, milliseconds from creation or null (T-35, T-90),
 * `pollInterval` in milliseconds (T-37), no related-task `_meta` on task results (T-46, T-49).
 */

/** The 2025 `Task` object. */
export interface Task2025 {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
}

export interface CreateTaskResult2025 {
  task: Task2025;
  _meta?: Record<string, unknown>;
}

export interface ListTasksResult2025 {
  tasks: Task2025[];
  nextCursor?: string;
}

/** What `tasks/result` answers for a terminal task: a result, or the JSON-RPC error to throw. */
export type TaskPayload =
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  | { readonly kind: 'error'; readonly error: RpcError }
  | { readonly kind: 'cancelled' };

/**
 * The status this wire shows. The core keeps a tool's `isError: true` result as `completed` (the
 * 2026-07-28 rule); 2025-11-25 calls that task `failed` (reference 1.7, T-24).
 */
export function projectStatus(task: TaskRecord): TaskStatus {
  if (task.status === 'completed' && task.result?.isError === true) return 'failed';
  return task.status;
}

function firstText(result: Record<string, unknown> | null): string | undefined {
  const content = result?.content;
  if (!Array.isArray(content)) return undefined;
  for (const block of content as unknown[]) {
    const { type, text } = (block ?? {}) as { type?: unknown; text?: unknown };
    if (type === 'text' && typeof text === 'string' && text !== '') return text;
  }
  return undefined;
}

/** T-25: a failed task says why; a working one shows its last durable progress. */
function statusMessageOf(task: TaskRecord, status: TaskStatus): string | undefined {
  if (task.statusMessage !== null && task.statusMessage !== '') return task.statusMessage;
  if (status === 'failed') return task.error?.message ?? firstText(task.result) ?? 'Tool reported an error';
  const p = task.progress;
  if (p === null || status !== 'working') return undefined;
  const amount = p.total === undefined ? `${p.done}` : `${p.done}/${p.total}`;
  return p.message === undefined ? amount : `${amount}: ${p.message}`;
}

/**
 * `ttl` as 2025 means it: retention from creation. A SEP-1391 task retains for `keepAlive` after it
 * ends, so its horizon is unknown (null) while it works and exact once it is terminal.
 */
export function ttlOf(task: TaskRecord): number | null {
  if (task.keepAliveMs !== null) {
    return task.terminalAt === null ? null : task.terminalAt - task.createdAt + task.keepAliveMs;
  }
  return task.ttlMs;
}

export function encodeTask(task: TaskRecord): Task2025 {
  const status = projectStatus(task);
  const wire: Task2025 = {
    taskId: task.id,
    status,
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.updatedAt).toISOString(),
    ttl: ttlOf(task),
  };
  const message = statusMessageOf(task, status);
  if (message !== undefined) wire.statusMessage = message;
  if (Number.isFinite(task.pollIntervalMs) && task.pollIntervalMs >= 1)
    wire.pollInterval = Math.round(task.pollIntervalMs);
  return wire;
}

/** T-15: the nested `{ task }`, never the operation's result. */
export function encodeCreateTaskResult(task: TaskRecord): CreateTaskResult2025 {
  return { task: encodeTask(task) };
}

export function encodeList(tasks: readonly TaskRecord[], nextCursor: string | null): ListTasksResult2025 {
  const result: ListTasksResult2025 = { tasks: tasks.map(encodeTask) };
  if (nextCursor !== null) result.nextCursor = nextCursor;
  return result;
}

/** The related-task `_meta` value for `taskId` (T-41, T-43). */
export function relatedTask(taskId: string): Record<string, unknown> {
  return { [RELATED_TASK_META]: { taskId } };
}

/**
 * `tasks/result` of a terminal task (T-38, T-40): the stored `CallToolResult` as the call would have
 * returned it (an `isError` result included) plus the related-task `_meta` (T-41); a JSON-RPC error
 * stays an error. A non-terminal task has no payload: the caller waits first.
 */
export function encodePayload(task: TaskRecord): TaskPayload | undefined {
  if (task.status === 'completed' && task.result !== null) {
    const meta = (task.result._meta ?? {}) as Record<string, unknown>;
    return { kind: 'result', result: { ...task.result, _meta: { ...meta, ...relatedTask(task.id) } } };
  }
  if (task.status === 'failed') {
    return { kind: 'error', error: task.error ?? { code: -32603, message: task.statusMessage ?? 'Task failed' } };
  }
  if (task.status === 'cancelled') return { kind: 'cancelled' };
  return undefined;
}
