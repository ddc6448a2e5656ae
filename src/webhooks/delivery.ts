import { encodeEventCursor } from '../core/event-cursor.js';
import { isTerminusError } from '../core/errors.js';
import type { Clock, Logger, Random } from '../core/ports.js';
import { webhookId, type Delivery, type DeliveryAttempt } from '../core/webhook.js';
import type { WebhookOutbox } from '../store/outbox-port.js';
import type { TargetPolicy } from './policy.js';
import { postWebhook, type PostOutcome } from './post.js';
import { DEFAULT_RETRY_SCHEDULE_MS, retryDelay } from './schedule.js';
import { sign } from './sign.js';

/** What a delivery loop tells its observer (metrics, logs) after each attempt. */
export interface DeliveryReport {
  readonly delivery: Delivery;
  readonly attempt: DeliveryAttempt;
  /** `delivered`; `retry` (another attempt is scheduled); `dead` (the schedule ran out). */
  readonly outcome: 'delivered' | 'retry' | 'dead';
}

export interface WebhookDeliveryOptions {
  readonly outbox: WebhookOutbox;
  /** This node's name: the lease owner of the rows it claims, recorded with each attempt. */
  readonly node: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly policy: TargetPolicy;
  /** Waits between attempts; default `DEFAULT_RETRY_SCHEDULE_MS` (8 attempts over 27.6 h). */
  readonly retryScheduleMs?: readonly number[];
  /** How often an idle loop looks for due rows it was not woken for. 1000 ms. */
  readonly pollMs?: number;
  /** A claimed row's lease: another node takes it over this long after this one died mid-attempt. 30 s. */
  readonly leaseMs?: number;
  /** One attempt's time limit. 10 s. */
  readonly timeoutMs?: number;
  /** Rows claimed (and posted at once) per round. 16. */
  readonly batch?: number;
  /** The POST itself (tests replace it); default `postWebhook`. */
  readonly post?: typeof postWebhook;
  readonly onAttempt?: (report: DeliveryReport) => void;
}

/** The running loop: `wake()` after a commit that may have added rows; `stop()` waits for attempts in flight. */
export interface WebhookDelivery {
  wake(): void;
  stop(): Promise<void>;
}

/** The JSON body of one delivery: the same bytes on every attempt of a row. */
export function deliveryBody(d: Delivery): string {
  return JSON.stringify({
    type: `task.${d.status}`,
    timestamp: new Date(d.eventAt).toISOString(),
    data: {
      taskId: d.taskId,
      seq: d.seq,
      status: d.status,
      statusMessage: d.statusMessage,
      tool: d.tool,
      cursor: encodeEventCursor(d.taskId, d.seq),
    },
  });
}

/**
 * Starts delivering the outbox: claim due rows (leased to `node`), POST each with the Standard
 * Webhooks headers, record the attempt (status code, error, duration) and move the row to
 * `delivered`, the next attempt's time, or `dead`. At-least-once: a node that dies after the
 * receiver answered but before the record committed leaves the row to be sent again, with the
 * same `webhook-id`, once its lease lapses.
 */
export function startWebhookDelivery(options: WebhookDeliveryOptions): WebhookDelivery {
  const { outbox, node, clock, random, logger } = options;
  const schedule = options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
  const pollMs = options.pollMs ?? 1_000;
  const leaseMs = options.leaseMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const batch = options.batch ?? 16;
  const post = options.post ?? postWebhook;
  const stopping = new AbortController();
  let wake = new AbortController();

  async function attempt(d: Delivery): Promise<void> {
    const body = deliveryBody(d);
    const id = webhookId(d.taskId, d.seq);
    const started = clock.now();
    const timestamp = Math.floor(started / 1000);
    let outcome: PostOutcome;
    try {
      outcome = await post(
        d.url,
        body,
        {
          'content-type': 'application/json',
          'user-agent': 'mcp-terminus-webhooks',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': sign(d.secret, id, timestamp, body),
        },
        options.policy,
        timeoutMs,
      );
    } catch (error) {
      outcome = { statusCode: null, error: String(error) };
    }
    const at = clock.now();
    const delivered = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const record: DeliveryAttempt = {
      attempt: d.attempts + 1,
      at,
      node,
      statusCode: outcome.statusCode,
      error: delivered ? null : outcome.error,
      durationMs: Math.max(0, at - started),
    };
    const wait = delivered ? null : retryDelay(schedule, d.attempts + 1, random);
    const next = delivered
      ? ({ state: 'delivered', nextAt: null } as const)
      : wait === null
        ? ({ state: 'dead', nextAt: null } as const)
        : ({ state: 'pending', nextAt: at + wait } as const);
    try {
      await outbox.recordAttempt(d, node, record, next);
    } catch (error) {
      // Another node took the row over (this one stalled past its lease): its record stands.
      if (isTerminusError(error, 'lease_lost')) return;
      throw error;
    }
    const reported = delivered ? 'delivered' : next.state === 'dead' ? 'dead' : 'retry';
    options.onAttempt?.({ delivery: d, attempt: record, outcome: reported });
    if (reported === 'dead') {
      logger.warn('webhook delivery gave up', { taskId: d.taskId, seq: d.seq, url: d.url, attempts: record.attempt });
    }
  }

  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      let claimed: Delivery[] = [];
      try {
        claimed = await outbox.claimDeliveries({ node, now: clock.now(), leaseMs, limit: batch });
        await Promise.all(claimed.map(attempt));
      } catch (error) {
        if (stopping.signal.aborted) return;
        logger.warn('webhook delivery round failed; trying again', { error: String(error) });
      }
      if (claimed.length >= batch) continue;
      const signal = AbortSignal.any([stopping.signal, wake.signal]);
      await clock.sleep(pollMs, signal).catch(() => undefined);
      if (wake.signal.aborted) wake = new AbortController();
    }
  }

  const running = loop();
  return {
    wake: () => wake.abort(),
    async stop() {
      stopping.abort();
      await running;
    },
  };
}
