/**
 * Decoding a server's task object into the wire port's `TaskSnapshot`, shared by both MCP wires:
 * they differ only in the TTL and poll-interval field names (`ttlMs`/`pollIntervalMs` in 2026-07-28,
 * `ttl`/`pollInterval` in 2025-11-25, both milliseconds from `createdAt`).
 */
import type { TaskSnapshot, WireStatusAnswer } from '../wire-port.js';
import { PROGRESS_META } from './envelope.js';
import { isRecord, malformed } from './rpc-error.js';

const STATUSES: readonly string[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

export function isWireStatus(value: unknown): value is WireStatusAnswer {
  return typeof value === 'string' && STATUSES.includes(value);
}

export interface SnapshotFields {
  readonly ttl: 'ttlMs' | 'ttl';
  readonly pollInterval: 'pollIntervalMs' | 'pollInterval';
}

export const MODERN_FIELDS: SnapshotFields = { ttl: 'ttlMs', pollInterval: 'pollIntervalMs' };
export const LEGACY_FIELDS: SnapshotFields = { ttl: 'ttl', pollInterval: 'pollInterval' };

/** Throws `malformed` unless `task` has a string id (equal to `expectedId` when given) and a known status. */
export function decodeSnapshot(task: unknown, fields: SnapshotFields, expectedId?: string): TaskSnapshot {
  if (!isRecord(task)) throw malformed('task is not an object');
  const { taskId, status } = task;
  if (typeof taskId !== 'string' || taskId === '') throw malformed('task has no taskId');
  if (expectedId !== undefined && taskId !== expectedId)
    throw malformed(`answer is about task ${taskId}, not ${expectedId}`);
  if (!isWireStatus(status)) throw malformed(`unknown task status ${String(status)}`);
  const snapshot: { -readonly [K in keyof TaskSnapshot]: TaskSnapshot[K] } = { taskId, status };
  if (typeof task.statusMessage === 'string') snapshot.statusMessage = task.statusMessage;
  const poll = task[fields.pollInterval];
  if (typeof poll === 'number' && Number.isFinite(poll) && poll > 0) snapshot.pollIntervalMs = poll;
  const ttl = task[fields.ttl];
  const createdAt = typeof task.createdAt === 'string' ? Date.parse(task.createdAt) : Number.NaN;
  if (typeof ttl === 'number' && Number.isFinite(ttl) && !Number.isNaN(createdAt)) snapshot.expiresAt = createdAt + ttl;
  if (isRecord(task.inputRequests)) snapshot.inputRequests = { ...task.inputRequests };
  const progress = isRecord(task._meta) ? task._meta[PROGRESS_META] : undefined;
  if (isRecord(progress) && typeof progress.done === 'number') {
    snapshot.progress = {
      done: progress.done,
      ...(typeof progress.total === 'number' ? { total: progress.total } : {}),
      ...(typeof progress.message === 'string' ? { message: progress.message } : {}),
    };
  }
  return snapshot;
}
