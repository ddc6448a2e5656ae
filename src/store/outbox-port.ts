import type { Delivery, DeliveryAttempt, DeliveryState } from '../core/webhook.js';

/**
 * The webhook outbox of a task store (issue 32). Rows are written by the store itself, in the
 * commit of the status change they announce (a task created with webhooks gets one row per status
 * event and endpoint its event set takes); this port is how `src/webhooks/` delivers them.
 *
 * Contract: `claim` leases due rows like tasks (on PostgreSQL `FOR UPDATE SKIP LOCKED`, so several
 * nodes never hold one row at once); `record` is fenced by the claim (lease owner and attempt
 * count) and rejects `lease_lost` when another node took the row since, writing nothing. Rows
 * outlive their task: a delivery retried for a day survives the task's retention.
 */
export interface WebhookOutbox {
  /** Up to `limit` pending rows due at `now` (next attempt reached, lease absent or expired), leased to `node`. */
  claimDeliveries(request: DeliveryClaim): Promise<Delivery[]>;
  /**
   * Records one attempt of a claimed row and where the row goes next (`pending` with `nextAt`,
   * `delivered`, or `dead`), releasing its lease. Fenced: `lease_lost` if the claim no longer holds.
   */
  recordAttempt(claimed: Delivery, node: string, attempt: DeliveryAttempt, next: NextDelivery): Promise<void>;
  /** The rows of one task with their attempts, oldest first; `owner` null for an operator. */
  readDeliveries(owner: string | null, taskId: string): Promise<DeliveryRecord[]>;
  /** Pending rows now, and when the oldest of them was created (null: none): for metrics. */
  deliveryStats(): Promise<{ readonly pending: number; readonly oldestPendingAt: number | null }>;
  /** Deletes up to `limit` delivered or dead rows (with their attempts) finished at or before `before`. */
  sweepDeliveries(before: number, limit: number): Promise<number>;
}

export interface DeliveryClaim {
  readonly node: string;
  readonly now: number;
  readonly leaseMs: number;
  readonly limit: number;
}

export interface NextDelivery {
  readonly state: DeliveryState;
  /** When `pending`: the next attempt's time. */
  readonly nextAt: number | null;
}

/** A row and every attempt made for it. */
export interface DeliveryRecord extends Delivery {
  readonly attemptLog: DeliveryAttempt[];
}
