import type { Database } from 'better-sqlite3';
import { leaseLost } from '../../core/errors.js';
import type { Delivery, DeliveryAttempt } from '../../core/webhook.js';
import type { DeliveryClaim, NextDelivery, WebhookOutbox } from '../outbox-port.js';
import { deliveryRecords, dueFirst, type AttemptRow, type OutboxRow } from '../outbox-row.js';
import { statement } from './row.js';

const COLUMNS = `task_id, seq, endpoint, owner, tool, url, secret, status, status_message, event_at, state, attempts,
  next_at, created_at, done_at`;

// Oldest due first; the write queue serialises claims, so two claims never take one row.
const CLAIM = `
UPDATE webhook_outbox SET lease_owner = @node, lease_expires_at = @leaseUntil
WHERE (task_id, seq, endpoint) IN (
  SELECT task_id, seq, endpoint FROM webhook_outbox
  WHERE state = 'pending' AND next_at <= @now AND (lease_expires_at IS NULL OR lease_expires_at <= @now)
  ORDER BY next_at
  LIMIT @limit)
RETURNING ${COLUMNS}`;

const RECORD = `
UPDATE webhook_outbox
SET state = @state, attempts = attempts + 1, next_at = @nextAt, done_at = @doneAt,
    lease_owner = NULL, lease_expires_at = NULL
WHERE task_id = @taskId AND seq = @seq AND endpoint = @endpoint AND lease_owner = @node AND attempts = @attempts`;

const INSERT_ATTEMPT = `
INSERT INTO webhook_attempts (task_id, seq, endpoint, attempt, at, node, status_code, error, duration_ms)
VALUES (@taskId, @seq, @endpoint, @attempt, @at, @node, @statusCode, @error, @durationMs)`;

const READ = `SELECT ${COLUMNS} FROM webhook_outbox WHERE task_id = @taskId AND (@owner IS NULL OR owner = @owner)
ORDER BY seq, endpoint`;

const ATTEMPTS = `
SELECT seq, endpoint, attempt, at, node, status_code, error, duration_ms FROM webhook_attempts
WHERE task_id = @taskId ORDER BY seq, endpoint, attempt`;

const STATS = `SELECT count(*) AS pending, min(created_at) AS oldest FROM webhook_outbox WHERE state = 'pending'`;

const SWEEP = `
DELETE FROM webhook_outbox WHERE (task_id, seq, endpoint) IN (
  SELECT task_id, seq, endpoint FROM webhook_outbox WHERE state <> 'pending' AND done_at <= @before LIMIT @limit)
RETURNING task_id, seq, endpoint`;

const SWEEP_ATTEMPTS = `DELETE FROM webhook_attempts WHERE task_id = @taskId AND seq = @seq AND endpoint = @endpoint`;

/** The SQLite outbox: writes through the store's group-commit queue, reads direct. */
export function sqliteOutbox(
  db: Database,
  enqueue: <T>(op: () => T) => Promise<T>,
  read: <T>(op: () => T) => Promise<T>,
): WebhookOutbox {
  return {
    claimDeliveries: (claim: DeliveryClaim) =>
      enqueue(() =>
        dueFirst(
          statement(db, CLAIM).all({
            node: claim.node,
            now: claim.now,
            leaseUntil: claim.now + claim.leaseMs,
            limit: claim.limit,
          }) as OutboxRow[],
        ),
      ),
    recordAttempt: (claimed: Delivery, node: string, attempt: DeliveryAttempt, next: NextDelivery) =>
      enqueue(() => {
        const key = { taskId: claimed.taskId, seq: claimed.seq, endpoint: claimed.endpoint };
        const changed = statement(db, RECORD).run({
          ...key,
          node,
          attempts: claimed.attempts,
          state: next.state,
          nextAt: next.state === 'pending' ? next.nextAt : null,
          doneAt: next.state === 'pending' ? null : attempt.at,
        }).changes;
        if (changed === 0) throw leaseLost(claimed.taskId, claimed.attempts);
        statement(db, INSERT_ATTEMPT).run({ ...key, ...attempt });
      }),
    readDeliveries: (owner: string | null, taskId: string) =>
      read(() => {
        const rows = statement(db, READ).all({ taskId, owner }) as OutboxRow[];
        return deliveryRecords(rows, statement(db, ATTEMPTS).all({ taskId }) as AttemptRow[]);
      }),
    deliveryStats: () =>
      read(() => {
        const row = statement(db, STATS).get() as { pending: number; oldest: number | null };
        return { pending: row.pending, oldestPendingAt: row.oldest };
      }),
    sweepDeliveries: (before: number, limit: number) =>
      enqueue(() => {
        const gone = statement(db, SWEEP).all({ before, limit }) as {
          task_id: string;
          seq: number;
          endpoint: number;
        }[];
        for (const row of gone) {
          statement(db, SWEEP_ATTEMPTS).run({ taskId: row.task_id, seq: row.seq, endpoint: row.endpoint });
        }
        return gone.length;
      }),
  };
}
