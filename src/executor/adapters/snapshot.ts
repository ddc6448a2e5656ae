/**
 * Decoding a server's task object into the wire port's `TaskSnapshot`, shared by both MCP wires:
 * they differ only in the TTL and poll-interval field names (`ttlMs`/`pollIntervalMs` in 2026-07-28,
 * `ttl`/`pollInterval` in 2025-11-25, both milliseconds from `createdAt`).
 */
import { isTerminal } from '../../core/task.js';
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

/** Longest task id taken (a UUID is 36 characters; ours are 43). */
export const MAX_TASK_ID_LENGTH = 256;
/** Status and progress messages are for people: longer ones are cut to this many characters. */
export const MAX_MESSAGE_LENGTH = 4_000;

/**
 * A server's task id, or `malformed`: 1-256 visible ASCII characters, with no `.` or `..` between
 * slashes and no backslash. Ids are opaque, and a slash is legal (standard base64 has one); an id is
 * echoed in requests, logs, the ledger and terminal output, so no control character, and nothing
 * that reads as a path out of somewhere (`../../etc`).
 */
export function decodeTaskId(value: unknown, what = 'taskId'): string {
  if (typeof value !== 'string' || value === '') throw malformed(`task has no ${what}`);
  if (value.length > MAX_TASK_ID_LENGTH || !/^[\x21-\x7e]+$/.test(value) || pathLike(value)) {
    throw malformed(`${what} ${JSON.stringify(value.slice(0, 64))}${value.length > 64 ? '…' : ''} is not a task id`);
  }
  return value;
}

function pathLike(id: string): boolean {
  return id.includes('\\') || id.split('/').some((segment) => segment === '.' || segment === '..');
}

/** A message for people, cut to `MAX_MESSAGE_LENGTH`. */
function text(value: string): string {
  return value.length <= MAX_MESSAGE_LENGTH ? value : `${value.slice(0, MAX_MESSAGE_LENGTH - 1)}…`;
}

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * Throws `malformed` unless `task` has a task id (equal to `expectedId` when given) and a known
 * status, and a status short of terminal carries no outcome (`result` or `error`): an answer that
 * contradicts itself is never believed. Optional fields of the wrong type or out of range (a
 * negative ttl, a progress that is not a finite count) are left out; long messages are cut.
 */
export function decodeSnapshot(task: unknown, fields: SnapshotFields, expectedId?: string): TaskSnapshot {
  if (!isRecord(task)) throw malformed('task is not an object');
  const { status } = task;
  const taskId = decodeTaskId(task.taskId);
  if (expectedId !== undefined && taskId !== expectedId)
    throw malformed(`answer is about task ${taskId}, not ${expectedId}`);
  if (!isWireStatus(status)) throw malformed(`unknown task status ${JSON.stringify(status)?.slice(0, 64)}`);
  if (!isTerminal(status) && (task.result !== undefined || task.error !== undefined)) {
    throw malformed(`a ${status} task carries ${task.result !== undefined ? 'a result' : 'an error'}`);
  }
  const snapshot: { -readonly [K in keyof TaskSnapshot]: TaskSnapshot[K] } = { taskId, status };
  if (typeof task.statusMessage === 'string') snapshot.statusMessage = text(task.statusMessage);
  const poll = task[fields.pollInterval];
  if (finite(poll) && poll > 0) snapshot.pollIntervalMs = poll;
  const ttl = task[fields.ttl];
  const createdAt = typeof task.createdAt === 'string' ? Date.parse(task.createdAt) : Number.NaN;
  if (finite(ttl) && ttl >= 0 && !Number.isNaN(createdAt) && Number.isFinite(createdAt + ttl)) {
    snapshot.expiresAt = createdAt + ttl;
  }
  if (isRecord(task.inputRequests)) snapshot.inputRequests = { ...task.inputRequests };
  const progress = isRecord(task._meta) ? task._meta[PROGRESS_META] : undefined;
  if (isRecord(progress) && finite(progress.done) && progress.done >= 0) {
    snapshot.progress = {
      done: progress.done,
      ...(finite(progress.total) && progress.total >= 0 ? { total: progress.total } : {}),
      ...(typeof progress.message === 'string' ? { message: text(progress.message) } : {}),
    };
  }
  return snapshot;
}
