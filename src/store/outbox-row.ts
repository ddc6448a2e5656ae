import type { Delivery, DeliveryState } from '../core/webhook.js';
import type { DeliveryRecord } from './outbox-port.js';

/** A `webhook_outbox` row as both SQL stores read it (numbers as numbers). */
export interface OutboxRow {
  readonly task_id: string;
  readonly seq: number;
  readonly endpoint: number;
  readonly owner: string;
  readonly tool: string;
  readonly url: string;
  readonly secret: string;
  readonly status: string;
  readonly status_message: string | null;
  readonly event_at: number;
  readonly state: DeliveryState;
  readonly attempts: number;
  readonly next_at: number | null;
  readonly created_at: number;
  readonly done_at: number | null;
}

/** A `webhook_attempts` row as both SQL stores read it. */
export interface AttemptRow {
  readonly seq: number;
  readonly endpoint: number;
  readonly attempt: number;
  readonly at: number;
  readonly node: string;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
}

export function toDelivery(row: OutboxRow): Delivery {
  return {
    taskId: row.task_id,
    seq: row.seq,
    endpoint: row.endpoint,
    owner: row.owner,
    tool: row.tool,
    url: row.url,
    secret: row.secret,
    status: row.status,
    statusMessage: row.status_message,
    eventAt: row.event_at,
    state: row.state,
    attempts: row.attempts,
    nextAt: row.next_at,
    createdAt: row.created_at,
    doneAt: row.done_at,
  };
}

/** Claimed deliveries, the earliest due first. */
export function dueFirst(rows: readonly OutboxRow[]): Delivery[] {
  return rows.map(toDelivery).sort((a, b) => (a.nextAt ?? 0) - (b.nextAt ?? 0));
}

/** A task's deliveries, each with the attempts made for it (`attempts`: all of the task's). */
export function deliveryRecords(rows: readonly OutboxRow[], attempts: readonly AttemptRow[]): DeliveryRecord[] {
  return rows.map((row) => ({
    ...toDelivery(row),
    attemptLog: attempts
      .filter((a) => a.seq === row.seq && a.endpoint === row.endpoint)
      .map((a) => ({
        attempt: a.attempt,
        at: a.at,
        node: a.node,
        statusCode: a.status_code,
        error: a.error,
        durationMs: a.duration_ms,
      })),
  }));
}
