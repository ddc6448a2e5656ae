import { leaseLost } from '../../core/errors.js';
import { isTerminal, type LateOutcome, type TaskStatus } from '../../core/task.js';
import type { Fence, FinishInput, FinishOutcome } from '../port.js';
import type { Db, Sql } from './db.js';
import { statusChange } from '../../core/task-events.js';
import { withEvents } from './event-append.js';
import { json, toRecord, type TaskRow } from './row.js';

// Locks the row under the fence, so a cancel racing this finish either committed before (we see
// `cancelled` and record a late outcome) or waits for us (and then finds a terminal task).
const LOCK_FENCED: Sql = (t) => `
SELECT status FROM ${t.tasks}
WHERE id = $1 AND lease_owner = $2 AND epoch = $3
FOR UPDATE`;

const COMPLETE: Sql = (t) => `
UPDATE ${t.tasks}
SET status = 'completed', result = $2::jsonb, result_digest = $3, input_requests = '{}',
    terminal_at = $4, updated_at = $4, lease_owner = NULL, lease_expires_at = NULL
WHERE id = $1
RETURNING *`;

const FAIL: Sql = (t) => `
UPDATE ${t.tasks}
SET status = 'failed', error = $2::jsonb, status_message = COALESCE($3, status_message), input_requests = '{}',
    terminal_at = $4, updated_at = $4, lease_owner = NULL, lease_expires_at = NULL
WHERE id = $1
RETURNING *`;

/** A cancel won first: the outcome is an audit fact only (S4); status and `updated_at` stay. */
const LATE: Sql = (t) => `
UPDATE ${t.tasks}
SET late_outcome = $2::jsonb, lease_owner = NULL, lease_expires_at = NULL
WHERE id = $1
RETURNING *`;

/** Fenced terminal write (S2, S3, S4); releases the lease either way. */
export function finish(db: Db, fence: Fence, outcome: FinishInput, now: number): Promise<FinishOutcome> {
  return db.transaction('finish', async (tx) => {
    const locked = await tx.query<{ status: TaskStatus }>(LOCK_FENCED, [fence.taskId, fence.workerId, fence.epoch]);
    const status = locked.rows[0]?.status;
    if (status === undefined) throw leaseLost(fence.taskId, fence.epoch);
    if (isTerminal(status)) {
      const late: LateOutcome =
        outcome.status === 'completed'
          ? { epoch: fence.epoch, at: now, result: outcome.result }
          : { epoch: fence.epoch, at: now, error: outcome.error };
      const row = (await tx.query<TaskRow>(LATE, [fence.taskId, json(late)])).rows[0] as TaskRow;
      return { outcome: 'late', task: toRecord(row), late: row.late_outcome as LateOutcome };
    }
    const row =
      outcome.status === 'completed'
        ? (await tx.query<TaskRow>(COMPLETE, [fence.taskId, json(outcome.result), outcome.resultDigest, now])).rows[0]
        : (await tx.query<TaskRow>(FAIL, [fence.taskId, json(outcome.error), outcome.statusMessage ?? null, now]))
            .rows[0];
    const recorded = toRecord(row as TaskRow);
    return { outcome: 'recorded', task: await withEvents(tx, recorded, statusChange(status, recorded), now) };
  });
}
