import type { TaskRecord } from '../../core/task.js';
import type { ClaimRequest } from '../port.js';
import type { Db, Sql } from './db.js';
import { LIVE, toRecord, type TaskRow } from './row.js';

/**
 * One statement: pick the oldest runnable tasks, skipping rows another node is claiming right now
 * (`SKIP LOCKED`, so N nodes claim N different batches instead of queueing on one row), and take
 * them with a lease and `epoch + 1`, which fences every earlier holder out (S3). A row that another
 * claim committed while we waited is re-checked against the lease condition (READ COMMITTED
 * re-evaluates the locked row), so two claims never return the same epoch. Lease bookkeeping
 * leaves `updated_at` alone: clients waiting for a change must not wake for it.
 */
const CLAIM: Sql = (t) => `
WITH picked AS (
  SELECT id FROM ${t.tasks}
  WHERE status IN ${LIVE}
    AND (lease_expires_at IS NULL OR lease_expires_at <= $3)
    AND tool = ANY ($5::text[])
  ORDER BY created_at, id
  LIMIT $4
  FOR UPDATE SKIP LOCKED
)
UPDATE ${t.tasks} AS task
SET lease_owner = $1, lease_expires_at = $2, epoch = task.epoch + 1
FROM picked
WHERE task.id = picked.id
RETURNING task.*`;

export async function claimTasks(db: Db, request: ClaimRequest): Promise<TaskRecord[]> {
  if (request.limit < 1 || request.tools.length === 0) return [];
  const rows = (
    await db.query<TaskRow>('claim', CLAIM, [
      request.workerId,
      request.now + request.leaseMs,
      request.now,
      Math.floor(request.limit),
      [...request.tools],
    ])
  ).rows;
  // RETURNING order is unspecified; hand tasks out oldest first, as selected.
  return rows.map(toRecord).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
}
