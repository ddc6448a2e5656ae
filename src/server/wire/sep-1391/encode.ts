import type { TaskRecord } from '../../../core/task.js';

/**
 * Encoding: `TaskRecord` -> SEP-1391 shapes (reference 2.2, 2.3). Pure.
 * Status spelling follows the reference implementation (`canceled`, one l; UNCONFIRMED in the SEP).
 */
export type AsyncStatus = 'submitted' | 'working' | 'input_required' | 'completed' | 'canceled' | 'failed' | 'unknown';

/**
 * L-18: a task no runner has claimed yet (epoch 0) is `submitted`; it is `working` from its first
 * claim. `unknown` is never produced: the durable record always knows.
 */
export function projectStatus(task: TaskRecord): AsyncStatus {
  switch (task.status) {
    case 'working':
      return task.epoch === 0 ? 'submitted' : 'working';
    case 'cancelled':
      return 'canceled';
    default:
      return task.status;
  }
}

/** The token a task answers to on this wire: its submission key, else its id. */
export function tokenOf(task: TaskRecord): string {
  return task.wire === 'sep-1391' && task.submissionKey !== null ? task.submissionKey : task.id;
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}

/**
 * L-09: the immediate `CallToolResult` with `operation: { token, keepAlive }`. `keepAlive` is the
 * retention the server granted, seconds after completion (L-21). `pollFrequency` (UNCONFIRMED,
 * L-25) is given in seconds, the unit of its sibling `keepAlive`.
 */
export function encodeAccepted(task: TaskRecord): Record<string, unknown> {
  return {
    content: [],
    operation: {
      token: tokenOf(task),
      keepAlive: seconds(task.keepAliveMs ?? task.ttlMs ?? 0),
      pollFrequency: seconds(task.pollIntervalMs),
    },
  };
}

/** L-11: `{ status, error? }`, `error` only when failed. */
export function encodeStatus(task: TaskRecord): Record<string, unknown> {
  const status = projectStatus(task);
  if (status !== 'failed') return { status };
  return { status, error: task.error?.message ?? task.statusMessage ?? 'Operation failed' };
}

/** L-10: `{ result: CallToolResult }`, wrapped. */
export function encodeResult(task: TaskRecord): Record<string, unknown> {
  return { result: task.result ?? { content: [] } };
}
