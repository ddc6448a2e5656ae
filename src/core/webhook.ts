/**
 * Webhooks (issue 32): where a task's terminal state (or each status change) is delivered, and
 * what one delivery of the durable outbox looks like. The outbox rows are written by the store in
 * the commit of the status change; `src/webhooks/` delivers them.
 */

/** `terminal`: only completed / failed / cancelled; `all`: every status change, the first `working` too. */
export const WEBHOOK_EVENT_SETS = ['terminal', 'all'] as const;
export type WebhookEventSet = (typeof WEBHOOK_EVENT_SETS)[number];

/** One endpoint a task's status events go to, as stored with the task. */
export interface WebhookEndpoint {
  /** `http://` or `https://`, checked against the server's target policy at submit and at each delivery. */
  readonly url: string;
  /** Standard Webhooks secret, `whsec_` + base64 of 24 to 64 random bytes. */
  readonly secret: string;
  readonly events: WebhookEventSet;
  /** Who named it: the call (`_meta`), the operator for the caller (`--webhook-for`) or for everyone (`--webhook`). */
  readonly source: 'call' | 'principal' | 'server';
}

/** Where one outbox row stands. `dead`: the retry schedule ran out (every attempt is recorded). */
export type DeliveryState = 'pending' | 'delivered' | 'dead';

/** One outbox row: one status event of one task, for one endpoint. */
export interface Delivery {
  readonly taskId: string;
  /** The event's seq: `msg_<taskId>_<seq>` is the stable `webhook-id` every attempt repeats. */
  readonly seq: number;
  /** The endpoint's position in the task's list (1-based). */
  readonly endpoint: number;
  readonly owner: string;
  readonly tool: string;
  readonly url: string;
  readonly secret: string;
  readonly status: string;
  readonly statusMessage: string | null;
  /** When the status changed (the event's time). */
  readonly eventAt: number;
  readonly state: DeliveryState;
  /** Attempts made so far. */
  readonly attempts: number;
  readonly nextAt: number | null;
  readonly createdAt: number;
  readonly doneAt: number | null;
}

/** One attempt, as recorded for `terminus webhooks`, the console and metrics. */
export interface DeliveryAttempt {
  readonly attempt: number;
  readonly at: number;
  readonly node: string;
  /** The HTTP status the receiver answered, or null when none came (refused target, network, timeout). */
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

/** The stable `webhook-id` of an outbox row: the same for every attempt, so a receiver can dedupe. */
export function webhookId(taskId: string, seq: number): string {
  return `msg_${taskId}_${seq}`;
}
