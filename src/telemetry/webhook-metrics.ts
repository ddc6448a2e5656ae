import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WebhookOutbox } from '../store/outbox-port.js';
import type { DeliveryReport } from '../webhooks/delivery.js';

/** What `webhookMetrics` gives the delivery loop: its `onAttempt`. */
export interface WebhookMetrics {
  attempt(report: DeliveryReport): void;
}

/**
 * Webhook delivery metrics (issue 32): `terminus_webhook_deliveries_total{outcome}` (delivered,
 * retry: a failed attempt that will be tried again, dead: the schedule ran out),
 * `terminus_webhook_attempt_seconds`, and, read from the outbox at each scrape (every node's rows),
 * `terminus_webhook_pending` and `terminus_webhook_oldest_pending_seconds`.
 * @example
 * const hooks = webhookMetrics({ registry: metrics.registry, outbox: store.webhooks!, now: () => Date.now() });
 * startWebhookDelivery({ ..., onAttempt: (r) => hooks.attempt(r) });
 */
export function webhookMetrics(options: {
  readonly registry: Registry;
  readonly outbox: Pick<WebhookOutbox, 'deliveryStats'>;
  readonly now: () => number;
}): WebhookMetrics {
  const registers = [options.registry];
  const deliveries = new Counter({
    name: 'terminus_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (failed, tried again later), dead (gave up)',
    labelNames: ['outcome'],
    registers,
  });
  const seconds = new Histogram({
    name: 'terminus_webhook_attempt_seconds',
    help: 'Time of one webhook delivery attempt, from the POST to the answer or the failure',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10],
    registers,
  });
  let stats: Promise<{ pending: number; oldestPendingAt: number | null }> | null = null;
  // One outbox read per scrape serves both gauges.
  const read = (): Promise<{ pending: number; oldestPendingAt: number | null }> => {
    stats ??= options.outbox.deliveryStats().finally(() => setTimeout(() => (stats = null), 0));
    return stats;
  };
  new Gauge({
    name: 'terminus_webhook_pending',
    help: 'Webhook outbox rows not yet delivered nor given up (all nodes), read at scrape',
    registers,
    async collect() {
      this.set((await read().catch(() => ({ pending: 0 }))).pending);
    },
  });
  new Gauge({
    name: 'terminus_webhook_oldest_pending_seconds',
    help: 'Age of the oldest undelivered webhook outbox row (0: none), read at scrape',
    registers,
    async collect() {
      const oldest = (await read().catch(() => ({ oldestPendingAt: null }))).oldestPendingAt;
      this.set(oldest === null ? 0 : Math.max(0, (options.now() - oldest) / 1000));
    },
  });
  return {
    attempt(report) {
      deliveries.inc({ outcome: report.outcome });
      seconds.observe(report.attempt.durationMs / 1000);
    },
  };
}
