import { leaseLost } from '../../core/errors.js';
import type { Delivery, DeliveryAttempt } from '../../core/webhook.js';
import type { DeliveryClaim, NextDelivery, WebhookOutbox } from '../outbox-port.js';
import { deliveryRecords, dueFirst, type AttemptRow, type OutboxRow } from '../outbox-row.js';
import type { Db, Sql } from './db.js';

const COLUMNS = `task_id, seq::float8 AS seq, endpoint, owner, tool, url, secret, status, status_message,
  event_at::float8 AS event_at, state, attempts, next_at::float8 AS next_at, created_at::float8 AS created_at,
  done_at::float8 AS done_at`;

/**
 * Due rows, oldest first, leased to this node. `SKIP LOCKED`: a row another node is claiming now is
 * passed over, so N nodes take N different batches and never hold one row at once; a row whose
 * lease lapsed (its node died mid-attempt) is due again.
 */
const CLAIM: Sql = (t) => `
WITH picked AS (
  SELECT task_id, seq, endpoint FROM ${t.outbox}
  WHERE state = 'pending' AND next_at <= $2 AND (lease_expires_at IS NULL OR lease_expires_at <= $2)
  ORDER BY next_at
  LIMIT $4
  FOR UPDATE SKIP LOCKED
)
UPDATE ${t.outbox} AS o SET lease_owner = $1, lease_expires_at = $3
FROM picked
WHERE o.task_id = picked.task_id AND o.seq = picked.seq AND o.endpoint = picked.endpoint
RETURNING o.task_id, o.seq::float8 AS seq, o.endpoint, o.owner, o.tool, o.url, o.secret, o.status, o.status_message,
  o.event_at::float8 AS event_at, o.state, o.attempts, o.next_at::float8 AS next_at,
  o.created_at::float8 AS created_at, o.done_at::float8 AS done_at`;

/** Fenced by the claim: the lease owner and the attempt count it saw. */
const RECORD: Sql = (t) => `
WITH moved AS (
  UPDATE ${t.outbox}
  SET state = $6, attempts = attempts + 1, next_at = $7, done_at = $8, lease_owner = NULL, lease_expires_at = NULL
  WHERE task_id = $1 AND seq = $2 AND endpoint = $3 AND lease_owner = $4 AND attempts = $5
  RETURNING task_id
)
INSERT INTO ${t.attempts} (task_id, seq, endpoint, attempt, at, node, status_code, error, duration_ms)
SELECT $1, $2, $3, $5 + 1, $9, $4, $10, $11, $12 FROM moved
RETURNING attempt`;

const READ: Sql = (t) => `
SELECT ${COLUMNS} FROM ${t.outbox} WHERE task_id = $1 AND ($2::text IS NULL OR owner = $2) ORDER BY seq, endpoint`;

const ATTEMPTS: Sql = (t) => `
SELECT seq::float8 AS seq, endpoint, attempt, at::float8 AS at, node, status_code, error, duration_ms
FROM ${t.attempts} WHERE task_id = $1 ORDER BY seq, endpoint, attempt`;

const STATS: Sql = (t) => `
SELECT count(*)::int AS pending, min(created_at)::float8 AS oldest FROM ${t.outbox} WHERE state = 'pending'`;

const SWEEP: Sql = (t) => `
WITH gone AS (
  DELETE FROM ${t.outbox} WHERE (task_id, seq, endpoint) IN (
    SELECT task_id, seq, endpoint FROM ${t.outbox} WHERE state <> 'pending' AND done_at <= $1 LIMIT $2
    FOR UPDATE SKIP LOCKED)
  RETURNING task_id, seq, endpoint
), attempts AS (
  DELETE FROM ${t.attempts} a USING gone
  WHERE a.task_id = gone.task_id AND a.seq = gone.seq AND a.endpoint = gone.endpoint
)
SELECT count(*)::int AS n FROM gone`;

/** The PostgreSQL outbox: each operation one statement, autocommit. */
export function postgresOutbox(db: Db): WebhookOutbox {
  return {
    async claimDeliveries(claim: DeliveryClaim) {
      const params = [claim.node, claim.now, claim.now + claim.leaseMs, claim.limit];
      const rows = (await db.query<OutboxRow>('claimDeliveries', CLAIM, params)).rows;
      return dueFirst(rows);
    },
    async recordAttempt(claimed: Delivery, node: string, attempt: DeliveryAttempt, next: NextDelivery) {
      const result = await db.query('recordAttempt', RECORD, [
        claimed.taskId,
        claimed.seq,
        claimed.endpoint,
        node,
        claimed.attempts,
        next.state,
        next.state === 'pending' ? next.nextAt : null,
        next.state === 'pending' ? null : attempt.at,
        attempt.at,
        attempt.statusCode,
        attempt.error,
        Math.round(attempt.durationMs),
      ]);
      if (result.rowCount === 0) throw leaseLost(claimed.taskId, claimed.attempts);
    },
    async readDeliveries(owner: string | null, taskId: string) {
      const rows = (await db.query<OutboxRow>('readDeliveries', READ, [taskId, owner])).rows;
      const attempts = (await db.query<AttemptRow>('readDeliveries', ATTEMPTS, [taskId])).rows;
      return deliveryRecords(rows, attempts);
    },
    async deliveryStats() {
      const row = (await db.query<{ pending: number; oldest: number | null }>('deliveryStats', STATS, [])).rows[0];
      return { pending: row?.pending ?? 0, oldestPendingAt: row?.oldest ?? null };
    },
    async sweepDeliveries(before: number, limit: number) {
      const row = (await db.query<{ n: number }>('sweepDeliveries', SWEEP, [before, limit])).rows[0];
      return row?.n ?? 0;
    },
  };
}
