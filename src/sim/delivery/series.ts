/**
 * A series' webhooks and event readers (issue 32), as `series.ts` wires them in: the operator
 * endpoint every task delivers to, each server node's delivery loop, the receiver, the readers;
 * after the workload settled, the drain (virtual time runs on until the outbox holds no pending row
 * and every reader finished, up to the retry schedule's length) and the checks.
 */
import type { WebhookOutbox } from '../../store/outbox-port.js';
import type { Violation } from '../checks/invariants.js';
import type { ClockScope, VirtualClock } from '../clock.js';
import type { SimClient } from '../client/sim-client.js';
import type { FaultClass } from '../faults.js';
import { sfc32 } from '../random.js';
import type { ServerFacts } from '../server/facts.js';
import type { SimServerOptions } from '../server/host.js';
import { settle, type Quiet } from '../settle.js';
import type { Trace } from '../trace.js';
import type { OperationPlan } from '../workload.js';
import { checkReaders, checkWebhooks } from './checks.js';
import { EventReaders } from './follow.js';
import { SIM_RETRY_SCHEDULE_MS, startNodeDelivery } from './loop.js';
import type { DeliveryPlan } from './plan.js';
import { RECEIVER_SECRET, RECEIVER_URL, SimReceiver } from './receiver.js';

/** Test-only hooks of the broken variants (`delivery/variants.ts`). */
export interface DeliveryHooks {
  /** Wraps each node's outbox under its delivery loop. */
  readonly outbox?: (outbox: WebhookOutbox) => WebhookOutbox;
  /** The cursor a reader resumes from. */
  readonly resumeFrom?: (cursor: string | undefined) => string | undefined;
}

/** The server key of the series that seal webhook secrets (at least 32 characters). */
const SIM_WEBHOOK_KEY = 'simulated-webhook-key-0123456789abcdef';

/** How long the drain may run for the outbox: the whole retry schedule (jitter included) and ten minutes more. */
const DRAIN_MS = SIM_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0) * 1.2 + 600_000;
/**
 * How long it runs for the readers: a cut reader resumes within 5 s and a failed read is retried
 * within 30 s. A reader of an operation left without a task id (UNKNOWN, for an operator) waits
 * for one for good, so this bounds the wait rather than ending it.
 */
const READERS_DRAIN_MS = 300_000;

export interface SeriesDeliveriesOptions {
  readonly seed: number;
  readonly plan: DeliveryPlan;
  readonly root: ClockScope;
  readonly trace: Trace;
  readonly fired: Map<FaultClass, number>;
  /** Virtual ms of the series start. */
  readonly start: number;
  readonly client: () => SimClient | null;
  readonly hooks?: DeliveryHooks;
}

export class SeriesDeliveries {
  readonly receiver: SimReceiver | null;
  readonly readers: EventReaders | null;
  readonly #o: SeriesDeliveriesOptions;

  constructor(o: SeriesDeliveriesOptions) {
    this.#o = o;
    const { plan, root, trace, fired, seed } = o;
    this.receiver =
      plan.webhooks === null
        ? null
        : new SimReceiver({
            scope: root.child('receiver'),
            random: sfc32(seed, 'receiver'),
            trace,
            rules: plan.rules,
            fired,
            start: o.start,
            outages: plan.outages,
          });
    this.readers = !plan.readers
      ? null
      : new EventReaders({
          scope: root.child('readers'),
          random: sfc32(seed, 'readers'),
          trace,
          rules: plan.rules,
          fired,
          client: o.client,
          ...(o.hooks?.resumeFrom === undefined ? {} : { resumeFrom: o.hooks.resumeFrom }),
        });
  }

  /** The plan's lines (none when it drew nothing). */
  describe(): string[] {
    const { plan } = this.#o;
    const lines: string[] = [];
    if (plan.webhooks !== null) {
      lines.push(`webhooks ${plan.webhooks} to ${RECEIVER_URL}${plan.sealed ? ', secrets sealed' : ''}`);
    }
    if (plan.readers) lines.push('event readers on every operation');
    for (const o of plan.outages) lines.push(`t=${o.at}ms receiver_down for ${o.for}ms`);
    return lines;
  }

  /** What the server host needs: the operator endpoint and each node's delivery loop. */
  server(): Pick<SimServerOptions, 'webhooks' | 'delivery'> {
    const receiver = this.receiver;
    if (receiver === null) return {};
    const random = sfc32(this.#o.seed, 'delivery');
    const hook = this.#o.hooks?.outbox;
    // Half the webhook series seal the secrets with a server key (`--webhook-key`) the loop opens them with.
    const keys = this.#o.plan.sealed ? { keys: [SIM_WEBHOOK_KEY] } : {};
    return {
      webhooks: {
        endpoints: [{ url: RECEIVER_URL, secret: RECEIVER_SECRET, events: this.#o.plan.webhooks ?? 'terminal' }],
        ...keys,
      },
      delivery: (node, scope, outbox, counter) =>
        startNodeDelivery({
          outbox,
          node,
          scope,
          random,
          counter,
          receiver,
          ...keys,
          ...(hook === undefined ? {} : { hook }),
        }),
    };
  }

  /** Each operation's reader starts 0-2 s after the operation. */
  startReaders(ops: readonly OperationPlan[]): void {
    const readers = this.readers;
    if (readers === null) return;
    const r = sfc32(this.#o.seed, 'reader-starts');
    for (const op of ops) {
      this.#o.root.at(this.#o.start + op.startAt + r.int(0, 2_000), () => readers.start(op.callNodeId));
    }
  }

  /** Runs virtual time on until no outbox row is pending and every reader finished (bounded). */
  async drain(clock: VirtualClock, quiet: Quiet, outbox: WebhookOutbox | undefined): Promise<void> {
    if (this.receiver === null && this.readers === null) return;
    const until = clock.now() + DRAIN_MS;
    const readersUntil = clock.now() + READERS_DRAIN_MS;
    for (;;) {
      const pending = this.receiver === null || outbox === undefined ? 0 : (await outbox.deliveryStats()).pending;
      if (pending === 0 && (this.readers === null || this.readers.settled || clock.now() >= readersUntil)) return;
      const at = clock.peek();
      if (at === null || at > until) return;
      clock.fireNext();
      await settle(quiet);
    }
  }

  check(facts: ServerFacts): Violation[] {
    return [
      ...(this.receiver === null ? [] : checkWebhooks(facts, this.receiver)),
      ...(this.readers === null ? [] : checkReaders(facts, this.readers)),
    ];
  }
}
