import { encodeEventCursor } from '../core/event-cursor.js';
import { isTerminusError } from '../core/errors.js';
import type { Clock, Logger, Random } from '../core/ports.js';
import { webhookId, type Delivery, type DeliveryAttempt } from '../core/webhook.js';
import type { WebhookOutbox } from '../store/outbox-port.js';
import type { TargetPolicy } from './policy.js';
import { postWebhook, type PostOutcome } from './post.js';
import { DEFAULT_RETRY_SCHEDULE_MS, retryDelay } from './schedule.js';
import { openSecret, secretsKey } from './seal.js';
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
  /**
   * A claimed row's lease. A node that dies mid-attempt (`kill -9`) leaves its claimed rows leased:
   * another node, or this one restarted, sends them again once the lease lapses, so this is how
   * long such deliveries wait. MUST exceed `timeoutMs`: a shorter lease lets another node take a
   * row whose attempt is still on the wire (a duplicate, and a `lease_lost` record). 30 s.
   */
  readonly leaseMs?: number;
  /** One attempt's time limit. 10 s. */
  readonly timeoutMs?: number;
  /**
   * Delivered and dead rows (with their attempts) are deleted this long after they finished;
   * null keeps them until `sweepDeliveries` is called by hand. 7 days.
   */
  readonly retentionMs?: number | null;
  /** How often the loop sweeps finished rows past `retentionMs`. 10 min. */
  readonly sweepEveryMs?: number;
  /** Rows claimed (and posted at once) per round. 16. */
  readonly batch?: number;
  /**
   * The server keys the stored secrets were sealed with (`WebhookSettings.keys`): each opens. A
   * sealed secret no key opens fails its attempt (retried on the schedule) with a message saying so.
   */
  readonly keys?: readonly string[];
  /** The POST itself (tests replace it); default `postWebhook`. */
  readonly post?: typeof postWebhook;
  readonly onAttempt?: (report: DeliveryReport) => void;
  /** Told how many finished rows a sweep deleted (only when it deleted some). */
  readonly onSwept?: (count: number) => void;
}

/** `retentionMs`'s default: a week of delivery records for `terminus webhooks` and the console. */
export const DEFAULT_DELIVERY_RETENTION_MS = 7 * 24 * 3_600_000;
/** `leaseMs`'s default. */
export const DEFAULT_DELIVERY_LEASE_MS = 30_000;
/** `timeoutMs`'s default. */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;
/** Rows one sweep statement deletes; a sweep repeats it until fewer are left. */
const SWEEP_BATCH = 500;

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
  const leaseMs = options.leaseMs ?? DEFAULT_DELIVERY_LEASE_MS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  if (!(leaseMs > timeoutMs)) {
    throw new RangeError(`webhook leaseMs (${leaseMs}) must exceed the attempt timeout (${timeoutMs} ms)`);
  }
  const retentionMs = options.retentionMs === undefined ? DEFAULT_DELIVERY_RETENTION_MS : options.retentionMs;
  const sweepEveryMs = options.sweepEveryMs ?? 600_000;
  const batch = options.batch ?? 16;
  const post = options.post ?? postWebhook;
  const keys = (options.keys ?? []).map(secretsKey);
  const stopping = new AbortController();
  let wake = new AbortController();
  let nextSweepAt = clock.now();

  /** Deletes finished rows past the retention, a batch at a time; a failure waits for the next sweep. */
  async function sweep(): Promise<void> {
    if (retentionMs === null || clock.now() < nextSweepAt) return;
    const now = clock.now();
    nextSweepAt = now + sweepEveryMs;
    let swept = 0;
    try {
      for (;;) {
        const count = await outbox.sweepDeliveries(now - retentionMs, SWEEP_BATCH);
        swept += count;
        if (count < SWEEP_BATCH || stopping.signal.aborted) break;
      }
    } catch (error) {
      logger.warn('webhook delivery sweep failed; trying at the next one', { error: String(error) });
    }
    if (swept > 0) {
      logger.info('webhook deliveries swept', {
        count: swept,
        finishedBefore: new Date(now - retentionMs).toISOString(),
      });
      options.onSwept?.(swept);
    }
  }

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
          'webhook-signature': sign(openSecret(d.secret, keys), id, timestamp, body),
        },
        options.policy,
        timeoutMs,
      );
    } catch (error) {
      outcome = { statusCode: null, error: error instanceof Error ? error.message : String(error) };
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
      await sweep();
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
