import type { Database } from 'better-sqlite3';
import type { ClaimedTask, ClaimRequest } from '../port.js';
import { LIVE, statement, TASK_COLUMNS, taskStatement, toRecord, type TaskValues } from './row.js';

/**
 * The oldest claimable tasks of ONE tool, read in order from `tasks_claim_order` (migration 002).
 * `EXPLAIN QUERY PLAN` (asserted in test/store/sqlite-claim-plan.test.ts):
 *   SEARCH tasks USING INDEX tasks_claim_order (tool=?)
 * no `SCAN tasks`, no `USE TEMP B-TREE FOR ORDER BY`: the read stops after `limit` rows that pass
 * the lease test, so its cost is the limit plus the leased rows it skips (at most the handlers
 * running), not the backlog. Measured by figure 9 of `npm run bench` (bench/figures/claim.ts): 1,000 vs 100,000 open tasks.
 */
export const CLAIM_CANDIDATES = `
SELECT id, created_at, lease_owner FROM tasks
WHERE tool = @tool
  AND status IN ${LIVE}
  AND (lease_expires_at IS NULL OR lease_expires_at <= @now)
ORDER BY created_at, id
LIMIT @limit`;

const TAKE = `
UPDATE tasks
SET lease_owner = @workerId, lease_expires_at = @leaseUntil, epoch = epoch + 1
WHERE id = @id
RETURNING ${TASK_COLUMNS}`;

interface Candidate {
  readonly id: string;
  readonly created_at: number;
  readonly lease_owner: string | null;
}

/**
 * A queued write: claims run one after another inside the batch transaction, so two claims never
 * see the same free lease, and each claim bumps the epoch that fences every earlier holder (S3).
 * One ordered read per tool (a node serves a handful), merged here: an `IN (tools)` over the index
 * would need a temp B-tree to interleave the tools. Lease bookkeeping leaves `updated_at` alone:
 * clients waiting for a change must not wake for it.
 */
export function claimTasks(db: Database, request: ClaimRequest): ClaimedTask[] {
  if (request.limit < 1 || request.tools.length === 0) return [];
  const limit = Math.floor(request.limit);
  const select = statement(db, CLAIM_CANDIDATES);
  const candidates: Candidate[] = [];
  for (const tool of new Set(request.tools)) {
    candidates.push(...(select.all({ tool, now: request.now, limit }) as Candidate[]));
  }
  candidates.sort(oldestFirst);
  const take = taskStatement(db, TAKE);
  const leaseUntil = request.now + request.leaseMs;
  return candidates.slice(0, limit).map((c) => ({
    ...toRecord(take.get({ id: c.id, workerId: request.workerId, leaseUntil }) as TaskValues),
    // Read in the same batch transaction as the update, so no other write came between.
    previousLeaseOwner: c.lease_owner,
  }));
}

function oldestFirst(a: Candidate, b: Candidate): number {
  return a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
