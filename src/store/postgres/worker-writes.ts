import { leaseLost, TerminusError } from '../../core/errors.js';
import { isTerminal, type InputRequest, type Progress, type TaskRecord } from '../../core/task.js';
import type { AppendBound, Fence } from '../port.js';
import type { Db, Sql } from './db.js';
import { statusChange } from '../../core/task-events.js';
import { appendEvents, withEvents } from './event-append.js';
import type { BatchOutcome } from '../../sql/pg-batch.js';
import { json, LIVE, ROWS, TASK_COLUMN_COUNT, TASK_COLUMNS, taskColumnsOf, toRecord, type TaskValues } from './row.js';

// Every statement here is fenced: `WHERE id = $1 AND lease_owner = $2 AND epoch = $3` (S3).
// Zero rows means the fence no longer holds, or (for the writes that also need a live status) the
// task is terminal; `whyZero` tells the two apart with one more read, so neither is silent.

const FENCED_STATUS: Sql = (t) => `SELECT status FROM ${t.tasks} WHERE id = $1 AND lease_owner = $2 AND epoch = $3`;

async function whyZero(db: Db, where: string, fence: Fence): Promise<TerminusError> {
  const params = [fence.taskId, fence.workerId, fence.epoch];
  const row = (await db.query<{ status: TaskRecord['status'] }>(where, FENCED_STATUS, params)).rows[0];
  if (row === undefined) return leaseLost(fence.taskId, fence.epoch);
  return new TerminusError('already_terminal', `task ${fence.taskId} is ${row.status}`, {
    details: { taskId: fence.taskId, status: row.status },
  });
}

/** Lease bookkeeping only: `updated_at` stays, and a cancelled task still heartbeats (S4). */
const HEARTBEAT: Sql = (t) => `
UPDATE ${t.tasks} SET lease_expires_at = $4
WHERE id = $1 AND lease_owner = $2 AND epoch = $3
RETURNING ${TASK_COLUMNS}`;

export async function heartbeat(db: Db, fence: Fence, leaseMs: number, now: number): Promise<TaskRecord> {
  const params = [fence.taskId, fence.workerId, fence.epoch, now + leaseMs];
  const row = (await db.query<TaskValues>('heartbeat', HEARTBEAT, params, ROWS)).rows[0];
  if (row === undefined) throw leaseLost(fence.taskId, fence.epoch);
  return toRecord(row);
}

/** One heartbeat of a batch (`heartbeatTasks`). */
export interface HeartbeatItem {
  readonly fence: Fence;
  readonly leaseMs: number;
  readonly now: number;
}

/**
 * The heartbeats of one turn as ONE fenced `UPDATE`: the runs a node started together beat
 * together, and one statement each held as many pooled connections as there were runs (a read
 * waited behind them). The items come as one `jsonb`, as the batched read's do, so the plan is
 * kept per connection.
 */
const HEARTBEAT_BATCH: Sql = (t) => `
UPDATE ${t.tasks} AS task SET lease_expires_at = beat.expires
FROM jsonb_to_recordset($1::jsonb) AS beat(ord int, id text, owner text, epoch int, expires bigint)
WHERE task.id = beat.id AND task.lease_owner = beat.owner AND task.epoch = beat.epoch
RETURNING ${taskColumnsOf('task')}, beat.ord`;

/** One outcome per item, in order: the task as stored, or `lease_lost` for a fence that no longer holds. */
export async function heartbeatTasks(db: Db, items: readonly HeartbeatItem[]): Promise<BatchOutcome<TaskRecord>[]> {
  const [only] = items;
  // A lone beat, or a task twice in one batch (an UPDATE joins a row once), goes alone.
  if (only !== undefined && (items.length === 1 || new Set(items.map((i) => i.fence.taskId)).size < items.length)) {
    return Promise.all(
      items.map((i) =>
        heartbeat(db, i.fence, i.leaseMs, i.now).then(
          (value): BatchOutcome<TaskRecord> => ({ ok: true, value }),
          (error: unknown): BatchOutcome<TaskRecord> => ({ ok: false, error }),
        ),
      ),
    );
  }
  const beats = JSON.stringify(
    items.map((i, ord) => ({
      ord,
      id: i.fence.taskId,
      owner: i.fence.workerId,
      epoch: i.fence.epoch,
      expires: i.now + i.leaseMs,
    })),
  );
  const rows = (await db.query<TaskValues>('heartbeat', HEARTBEAT_BATCH, [beats], ROWS)).rows;
  const beaten = new Map(rows.map((row) => [row[TASK_COLUMN_COUNT] as number, row]));
  return items.map((item, i) => {
    const row = beaten.get(i);
    return row === undefined
      ? { ok: false, error: leaseLost(item.fence.taskId, item.fence.epoch) }
      : { ok: true, value: toRecord(row) };
  });
}

/** Progress never touches a terminal task (S2); the message replaces the status message if given. */
const PROGRESS: Sql = (t) => `
UPDATE ${t.tasks} SET progress = $4::jsonb, status_message = COALESCE($5, status_message), updated_at = $6
WHERE id = $1 AND lease_owner = $2 AND epoch = $3 AND status IN ${LIVE}`;

/** The progress and its event, in one transaction. */
export async function progress(db: Db, fence: Fence, value: Progress, now: number, bound?: AppendBound): Promise<void> {
  const params = [fence.taskId, fence.workerId, fence.epoch, json(value), value.message ?? null, now];
  const written = await db.transaction('progress', async (tx) => {
    const result = await tx.query(PROGRESS, params);
    if (result.rowCount === 0) return false;
    await appendEvents(tx, fence.taskId, [{ kind: 'progress', progress: value }], now, bound);
    return true;
  });
  if (!written) throw await whyZero(db, 'progress', fence);
}

const CHECKPOINT: Sql = (t) => `
UPDATE ${t.tasks} SET checkpoint = $4::jsonb, updated_at = $5
WHERE id = $1 AND lease_owner = $2 AND epoch = $3 AND status IN ${LIVE}`;

export async function checkpoint(db: Db, fence: Fence, data: unknown, now: number): Promise<void> {
  const params = [fence.taskId, fence.workerId, fence.epoch, json(data), now];
  const result = await db.query('checkpoint', CHECKPOINT, params);
  if (result.rowCount === 0) throw await whyZero(db, 'checkpoint', fence);
}

/**
 * A key asked before (outstanding or answered) is not asked again: the row is then
 * returned as it is, untouched, by the second statement.
 */
const REQUEST_INPUT: Sql = (t) => `
UPDATE ${t.tasks}
SET input_requests = input_requests || jsonb_build_object($4::text, $5::jsonb),
    status = 'input_required', updated_at = $6
WHERE id = $1 AND lease_owner = $2 AND epoch = $3 AND status IN ${LIVE}
  AND NOT (input_requests ? $4::text) AND NOT (input_responses ? $4::text)
RETURNING ${TASK_COLUMNS}`;

const FENCED_TASK: Sql = (t) =>
  `SELECT ${TASK_COLUMNS} FROM ${t.tasks} WHERE id = $1 AND lease_owner = $2 AND epoch = $3`;

/** The status before the request, locked, so the round's status event says what changed. */
const LOCK_STATUS: Sql = (t) => `SELECT status FROM ${t.tasks} WHERE id = $1 FOR UPDATE`;

export async function requestInput(
  db: Db,
  fence: Fence,
  key: string,
  request: InputRequest,
  now: number,
): Promise<TaskRecord> {
  const params = [fence.taskId, fence.workerId, fence.epoch, key, json(request), now];
  const asked = await db.transaction('requestInput', async (tx) => {
    const before = (await tx.query<{ status: TaskRecord['status'] }>(LOCK_STATUS, [fence.taskId])).rows[0];
    const row = (await tx.query<TaskValues>(REQUEST_INPUT, params, ROWS)).rows[0];
    if (before === undefined || row === undefined) return null;
    const task = toRecord(row);
    return withEvents(tx, task, [{ kind: 'input_requested', key, request }, ...statusChange(before.status, task)], now);
  });
  if (asked !== null) return asked;
  const current = (await db.query<TaskValues>('requestInput', FENCED_TASK, params.slice(0, 3), ROWS)).rows[0];
  if (current === undefined) throw leaseLost(fence.taskId, fence.epoch);
  const task = toRecord(current);
  if (isTerminal(task.status)) {
    throw new TerminusError('already_terminal', `task ${task.id} is ${task.status}`, {
      details: { taskId: task.id, status: task.status },
    });
  }
  return task;
}

const RELEASE: Sql = (t) => `
UPDATE ${t.tasks} SET lease_owner = NULL, lease_expires_at = NULL
WHERE id = $1 AND lease_owner = $2 AND epoch = $3`;

export async function release(db: Db, fence: Fence): Promise<void> {
  const result = await db.query('release', RELEASE, [fence.taskId, fence.workerId, fence.epoch]);
  if (result.rowCount === 0) throw leaseLost(fence.taskId, fence.epoch);
}
