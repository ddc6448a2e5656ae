import type { Database } from 'better-sqlite3';
import type { InputRequest, Progress, TaskRecord } from '../../core/task.js';
import type { AppendBound, Fence } from '../port.js';
import { statusChange } from '../../core/task-events.js';
import { withEvents } from './event-append.js';
import { assertLive, FENCE, fenceParams, noRowUpdated, selectFenced } from './fence.js';
import { json, LIVE, statement, TASK_COLUMNS, taskStatement, toRecord, type TaskValues } from './row.js';

// Every statement here is fenced: `WHERE id AND lease_owner AND epoch` (S3). All run as queued
// writes inside a group-commit savepoint.

const HEARTBEAT = `UPDATE tasks SET lease_expires_at = @leaseUntil WHERE ${FENCE} RETURNING ${TASK_COLUMNS}`;

/** Succeeds on a cancelled task too: the returned status is how the runner learns of the cancel. */
export function heartbeat(db: Database, fence: Fence, leaseMs: number, now: number): TaskRecord {
  const row = taskStatement(db, HEARTBEAT).get({ ...fenceParams(fence), leaseUntil: now + leaseMs }) as
    TaskValues | undefined;
  return row === undefined ? noRowUpdated(db, fence) : toRecord(row);
}

const PROGRESS = `
UPDATE tasks SET progress = @progress, status_message = coalesce(@message, status_message), updated_at = @now
WHERE ${FENCE} AND status IN ${LIVE}
RETURNING ${TASK_COLUMNS}`;

export function progress(db: Database, fence: Fence, value: Progress, now: number, bound?: AppendBound): void {
  const params = { ...fenceParams(fence), progress: json(value), message: value.message ?? null, now };
  const row = taskStatement(db, PROGRESS).get(params) as TaskValues | undefined;
  if (row === undefined) noRowUpdated(db, fence);
  withEvents(db, toRecord(row), [{ kind: 'progress', progress: value }], now, bound);
}

const CHECKPOINT = `UPDATE tasks SET checkpoint = @data, updated_at = @now WHERE ${FENCE} AND status IN ${LIVE}`;

export function checkpoint(db: Database, fence: Fence, data: unknown, now: number): void {
  if (statement(db, CHECKPOINT).run({ ...fenceParams(fence), data: json(data), now }).changes === 0) {
    noRowUpdated(db, fence);
  }
}

const REQUEST_INPUT = `
UPDATE tasks SET input_requests = @inputRequests, status = 'input_required', updated_at = @now
WHERE ${FENCE} AND status IN ${LIVE}
RETURNING ${TASK_COLUMNS}`;

/** A key asked before (outstanding or answered) is not asked again. */
export function requestInput(db: Database, fence: Fence, key: string, request: InputRequest, now: number): TaskRecord {
  const task = selectFenced(db, fence);
  assertLive(task);
  if (Object.hasOwn(task.inputRequests, key) || Object.hasOwn(task.inputResponses, key)) return task;
  const inputRequests = json({ ...task.inputRequests, [key]: request });
  const row = taskStatement(db, REQUEST_INPUT).get({ ...fenceParams(fence), inputRequests, now }) as
    TaskValues | undefined;
  if (row === undefined) return noRowUpdated(db, fence);
  const asked = toRecord(row);
  return withEvents(db, asked, [{ kind: 'input_requested', key, request }, ...statusChange(task.status, asked)], now);
}

const RELEASE = `UPDATE tasks SET lease_owner = NULL, lease_expires_at = NULL WHERE ${FENCE}`;

/** Gives the lease up; status and epoch stay, so the next claim fences this worker out. */
export function release(db: Database, fence: Fence): void {
  if (statement(db, RELEASE).run(fenceParams(fence)).changes === 0) noRowUpdated(db, fence);
}
