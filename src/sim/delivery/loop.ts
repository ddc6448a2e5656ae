/**
 * One server node's webhook delivery loop in the simulation: the real `startWebhookDelivery` on
 * the node's clock scope, over the store's real outbox seen through a view that dies with the node
 * (a crash is a `kill -9`: its leased rows stay leased until the lease lapses, an attempt in flight
 * never records) and is held while the node stalls. Its POSTs go to the series' receiver.
 */
import { silentLogger } from '../../core/ports.js';
import type { WebhookOutbox } from '../../store/outbox-port.js';
import { startWebhookDelivery } from '../../webhooks/delivery.js';
import type { ClockScope } from '../clock.js';
import type { SimRandom } from '../random.js';
import type { Counted } from '../server/recording-store.js';
import type { SimReceiver } from './receiver.js';
import { nodeGate } from '../node-gate.js';

/**
 * The real schedule's shape scaled from hours to minutes (1 s, 5 s, 30 s, 1 min, 2 min, 5 min, then
 * 10 min five times: 12 attempts over 59 min), so a receiver down for minutes of virtual time is
 * outlasted without simulating a day. The default schedule's spacing is the delivery tests' business.
 */
export const SIM_RETRY_SCHEDULE_MS: readonly number[] = [
  1_000, 5_000, 30_000, 60_000, 120_000, 300_000, 600_000, 600_000, 600_000, 600_000, 600_000,
];
/**
 * A node's lease on the rows it claimed and one attempt's time limit (the lease must exceed it); an
 * idle loop looks for due retries every 5 s (new rows wake it at once): each look is a claim query,
 * and at 1 s they made a delivering series cost twice one that does not.
 */
export const SIM_DELIVERY = { leaseMs: 15_000, timeoutMs: 5_000, pollMs: 5_000 };

export interface NodeDelivery {
  wake(): void;
  /** The node dies: nothing of its loop reaches the store again. */
  kill(): void;
  freeze(): void;
  thaw(): void;
}

export interface NodeDeliveryOptions {
  readonly outbox: WebhookOutbox;
  readonly node: string;
  readonly scope: ClockScope;
  readonly random: SimRandom;
  /** The host's in-flight counter: outbox writes go through the SQLite group commit (`settle`). */
  readonly counter: Counted;
  readonly receiver: SimReceiver;
  /** The server keys stored secrets were sealed with (`--webhook-key`). */
  readonly keys?: readonly string[];
  /** Test-only: a broken outbox (`delivery/variants.ts`). */
  readonly hook?: (outbox: WebhookOutbox) => WebhookOutbox;
}

export function startNodeDelivery(o: NodeDeliveryOptions): NodeDelivery {
  const gate = nodeGate();
  // Counted while it runs (not while a frozen node holds it): the drain waits for these.
  const wrap = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    gate.wrap(async (...args: A): Promise<R> => {
      o.counter.inFlight++;
      try {
        return await fn(...args);
      } finally {
        o.counter.inFlight--;
      }
    });
  const inner = o.outbox;
  const view: WebhookOutbox = {
    claimDeliveries: wrap((c) => inner.claimDeliveries(c)),
    recordAttempt: wrap((d, node, a, n) => inner.recordAttempt(d, node, a, n)),
    readDeliveries: wrap((owner, id) => inner.readDeliveries(owner, id)),
    deliveryStats: wrap(() => inner.deliveryStats()),
    sweepDeliveries: wrap((before, limit) => inner.sweepDeliveries(before, limit)),
  };
  const loop = startWebhookDelivery({
    outbox: o.hook === undefined ? view : o.hook(view),
    node: o.node,
    clock: o.scope,
    random: o.random,
    logger: silentLogger,
    policy: {},
    retryScheduleMs: SIM_RETRY_SCHEDULE_MS,
    ...SIM_DELIVERY,
    retentionMs: null,
    post: o.receiver.post,
    ...(o.keys === undefined ? {} : { keys: o.keys }),
  });
  return {
    wake: () => loop.wake(),
    kill: () => gate.kill(),
    freeze: () => gate.freeze(),
    thaw: () => gate.thaw(),
  };
}
