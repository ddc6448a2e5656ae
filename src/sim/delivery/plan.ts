/**
 * Webhook and event-reader faults (issue 32): which series deliver webhooks, what happens to the
 * deliveries and to the readers of the tasks' ordered events. Drawn from their own random stream
 * (`deliveries`), so adding them shifts no draw of the other classes' plans, and only when a class
 * is drawn: a series that draws none runs exactly as before (no endpoint, no reader).
 */
import type { WebhookEventSet } from '../../core/webhook.js';
import { DELIVERY_FAULT_CLASSES, type FaultClass, type MessageRule } from '../faults.js';
import { sfc32 } from '../random.js';

/** The receiver's outage: from `at` (virtual ms from the series start) for `for` ms. */
export interface Outage {
  readonly at: number;
  readonly for: number;
}

export interface DeliveryPlan {
  /** The operator's endpoint's event set (`--webhook`, every task), or null: no webhooks in this series. */
  readonly webhooks: WebhookEventSet | null;
  /** Every operation's events are read by a reader (`executor.events()`) that resumes from its cursor. */
  readonly readers: boolean;
  /** `webhook_lost`, `webhook_duplicated`, `webhook_delayed`, `event_stream_cut` rules. */
  readonly rules: MessageRule[];
  readonly outages: Outage[];
  /** Secrets are sealed with a server key (`--webhook-key`) before they are stored, and opened by the loop. */
  readonly sealed: boolean;
}

export const NO_DELIVERIES: DeliveryPlan = { webhooks: null, readers: false, rules: [], outages: [], sealed: false };

const rule = (fault: FaultClass, remaining: number, p: number, arg = 0): MessageRule => ({
  fault,
  op: null,
  remaining,
  p,
  arg,
});

/** The share of swarm series that deliver webhooks or read events; the others run exactly as before. */
export const DELIVERY_SHARE = 0.25;

/**
 * Swarm: a quarter of the series (`DELIVERY_SHARE`) draw these faults, each class on with
 * probability 0.5 (restricted to `allowed`). Only a share: readers' reads take the executor's tokens
 * and cross the same network as its polls, so a series with readers is another series; the other
 * three quarters keep the draws, traces and figures they had.
 */
export function deliveryPlan(seed: number, allowed: readonly FaultClass[]): DeliveryPlan {
  const r = sfc32(seed, 'deliveries');
  if (!r.chance(DELIVERY_SHARE)) return NO_DELIVERIES;
  const rules: MessageRule[] = [];
  const outages: Outage[] = [];
  let readers = false;
  for (const fault of DELIVERY_FAULT_CLASSES) {
    if (!allowed.includes(fault) || !r.chance(0.5)) continue;
    switch (fault) {
      case 'webhook_lost':
        rules.push(rule(fault, r.int(1, 3), 0.5));
        break;
      case 'webhook_duplicated':
        rules.push(rule(fault, r.int(1, 3), 0.5));
        break;
      case 'webhook_delayed':
        // Past the attempt timeout half the time: the sender retries while the first is on its way.
        rules.push(rule(fault, r.int(1, 2), 0.5, r.int(500, 12_000)));
        break;
      case 'receiver_down':
        outages.push({ at: r.int(0, 20_000), for: r.int(20_000, 180_000) });
        break;
      case 'event_stream_cut':
        readers = true;
        rules.push(rule(fault, r.int(1, 4), 0.3));
        break;
    }
  }
  const hooked = rules.some((x) => x.fault !== 'event_stream_cut') || outages.length > 0;
  const webhooks = hooked ? (r.chance(0.5) ? 'terminal' : 'all') : null;
  return { webhooks, readers, rules, outages, sealed: webhooks !== null && r.chance(0.5) };
}
