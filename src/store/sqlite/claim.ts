import type { Database } from 'better-sqlite3';
import type { TaskRecord } from '../../core/task.js';
import type { ClaimRequest } from '../port.js';
import { LIVE, statement, toRecord, type TaskRow } from './row.js';

const CLAIM = `
UPDATE tasks
SET lease_owner = @workerId, lease_expires_at = @leaseUntil, epoch = epoch + 1
WHERE id IN (
  SELECT id FROM tasks
  WHERE status IN ${LIVE}
    AND (lease_expires_at IS NULL OR lease_expires_at <= @now)
    AND tool IN (SELECT value FROM json_each(@tools))
  ORDER BY created_at, id
  LIMIT @limit)
RETURNING *`;

/**
 * A queued write: claims run one after another inside the batch transaction, so two claims never
 * see the same free lease, and each claim bumps the epoch that fences every earlier holder (S3).
 * Lease bookkeeping leaves `updated_at` alone: clients waiting for a change must not wake for it.
 */
export function claimTasks(db: Database, request: ClaimRequest): TaskRecord[] {
  if (request.limit < 1 || request.tools.length === 0) return [];
  const rows = statement(db, CLAIM).all({
    workerId: request.workerId,
    leaseUntil: request.now + request.leaseMs,
    now: request.now,
    tools: JSON.stringify(request.tools),
    limit: Math.floor(request.limit),
  }) as TaskRow[];
  // RETURNING order is unspecified; hand tasks out oldest first, as selected.
  return rows.map(toRecord).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
}
