import type { ClaimedTask, ClaimRequest } from '../port.js';
import type { Db, Sql } from './db.js';
import { LIVE, ROWS, TASK_COLUMN_COUNT, taskColumnsOf, toRecord, type TaskValues } from './row.js';

/**
 * One statement: per tool of this node (`unnest` + `LATERAL`), the oldest runnable tasks read in
 * order from `tasks_claim_order` (migration 002), skipping rows another node is claiming right now
 * (`SKIP LOCKED`, so N nodes claim N different batches instead of queueing on one row); the
 * per-tool lists are merged oldest first and the first `limit` taken with a lease and `epoch + 1`,
 * which fences every earlier holder out (S3). Plan (asserted in test/store/claim-plan.test.ts):
 *   Nested Loop -> Function Scan on unnest -> Limit -> LockRows -> Index Scan using tasks_claim_order
 * no Seq Scan on tasks and no Sort over the tasks read: each tool's scan stops after `limit` rows,
 * so the cost is `tools x limit`, not the backlog. Rows locked by one tool's scan but not taken
 * stay locked only until this statement commits. A row that another claim committed while we
 * waited is re-checked against the lease condition (READ COMMITTED re-evaluates the locked row),
 * so two claims never return the same epoch. Lease bookkeeping leaves `updated_at` alone: clients
 * waiting for a change must not wake for it.
 */
export const CLAIM: Sql = (t) => `
WITH picked AS (
  SELECT candidate.id, candidate.lease_owner AS previous_lease_owner
  FROM unnest($5::text[]) AS wanted(tool)
  CROSS JOIN LATERAL (
    SELECT id, created_at, lease_owner FROM ${t.tasks}
    WHERE tool = wanted.tool
      AND status IN ${LIVE}
      AND (lease_expires_at IS NULL OR lease_expires_at <= $3)
    ORDER BY created_at, id
    LIMIT $4
    FOR UPDATE SKIP LOCKED
  ) AS candidate
  ORDER BY candidate.created_at, candidate.id
  LIMIT $4
)
UPDATE ${t.tasks} AS task
SET lease_owner = $1, lease_expires_at = $2, epoch = task.epoch + 1
FROM picked
WHERE task.id = picked.id
RETURNING ${taskColumnsOf('task')}, picked.previous_lease_owner`;

/** Claims up to `request.limit` runnable tasks of `request.tools` for `request.workerId` (see `CLAIM`). */
export async function claimTasks(db: Db, request: ClaimRequest): Promise<ClaimedTask[]> {
  if (request.limit < 1 || request.tools.length === 0) return [];
  const rows = (
    await db.query<TaskValues>(
      'claim',
      CLAIM,
      [
        request.workerId,
        request.now + request.leaseMs,
        request.now,
        Math.floor(request.limit),
        [...new Set(request.tools)],
      ],
      ROWS,
    )
  ).rows;
  // RETURNING order is unspecified; hand tasks out oldest first, as selected.
  // The locked row's lease owner before this UPDATE (READ COMMITTED re-read it after the lock).
  const claimed = rows.map((row) => ({
    ...toRecord(row),
    previousLeaseOwner: row[TASK_COLUMN_COUNT] as string | null,
  }));
  return claimed.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
}
