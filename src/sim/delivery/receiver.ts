/**
 * The webhook receiver of a series (issue 32): the `post` the real delivery loop
 * (`startWebhookDelivery`) is given, on virtual time. It stands for an HTTP endpoint a network away:
 * down for its outages (connection refused), and the rules of the delivery plan lose a POST (the
 * sender's attempt times out), double one (its 2xx answer lost, so the sender sends again, or the
 * same POST arriving twice), or hold one back for seconds. It checks each signature (Standard
 * Webhooks) and records what arrived by `webhook-id`, which is what the checker reads.
 */
import type { PostOutcome } from '../../webhooks/post.js';
import { verify } from '../../webhooks/sign.js';
import type { ClockScope } from '../clock.js';
import { fireRule, type FaultClass, type RuleSink } from '../faults.js';
import type { SimRandom } from '../random.js';
import type { Trace } from '../trace.js';
import type { Outage } from './plan.js';

/** The operator endpoint every task of a webhook series delivers to, and its (fixed) secret. */
export const RECEIVER_URL = 'https://receiver.sim.invalid/hooks';
export const RECEIVER_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

/** What arrived under one `webhook-id`. */
export interface Received {
  readonly taskId: string;
  readonly seq: number;
  readonly status: string;
  /** Times it arrived (duplicates included). */
  count: number;
}

export interface ReceiverOptions {
  readonly scope: ClockScope;
  readonly random: SimRandom;
  readonly trace: Trace;
  readonly rules: RuleSink['rules'];
  readonly fired: Map<FaultClass, number>;
  /** Virtual ms of the series start (outages are relative to it). */
  readonly start: number;
  readonly outages: readonly Outage[];
}

export class SimReceiver {
  readonly received = new Map<string, Received>();
  /** Deliveries whose signature did not verify, or whose id is not the one its body names. */
  readonly refused: string[] = [];
  readonly #o: ReceiverOptions;
  readonly #sink: RuleSink;

  constructor(options: ReceiverOptions) {
    this.#o = options;
    this.#sink = { rules: options.rules, random: options.random, fired: options.fired, trace: options.trace };
  }

  #down(at: number): boolean {
    return this.#o.outages.some((o) => at >= this.#o.start + o.at && at < this.#o.start + o.at + o.for);
  }

  /** Counts an outage as fired once a POST met it. */
  #refused(): PostOutcome {
    const { fired, trace } = this.#o;
    fired.set('receiver_down', (fired.get('receiver_down') ?? 0) + 1);
    trace.add('fault', 'receiver_down');
    return { statusCode: null, error: 'connect ECONNREFUSED' };
  }

  #receive(body: string, headers: Readonly<Record<string, string>>): void {
    const id = headers['webhook-id'] ?? '';
    const timestamp = Number(headers['webhook-timestamp']);
    const signature = headers['webhook-signature'] ?? '';
    const event = JSON.parse(body) as { data: { taskId: string; seq: number; status: string } };
    const { taskId, seq, status } = event.data;
    if (!verify(RECEIVER_SECRET, id, timestamp, body, signature) || id !== `msg_${taskId}_${seq}`) {
      this.refused.push(id);
      return;
    }
    const seen = this.received.get(id);
    if (seen === undefined) this.received.set(id, { taskId, seq, status, count: 1 });
    else seen.count++;
    this.#o.trace.add('receiver', `${id} ${status}${seen === undefined ? '' : ` (x${seen.count})`}`);
  }

  /** `WebhookDeliveryOptions.post`: resolves the attempt's outcome on virtual time. */
  readonly post = (
    _url: string,
    body: string,
    headers: Readonly<Record<string, string>>,
    _policy: unknown,
    timeoutMs: number,
  ): Promise<PostOutcome> => {
    const { scope, random } = this.#o;
    return new Promise<PostOutcome>((resolve) => {
      let done = false;
      const finish = (outcome: PostOutcome): void => {
        if (done) return;
        done = true;
        timer.cancel();
        resolve(outcome);
      };
      const timer = scope.at(scope.now() + timeoutMs, () =>
        finish({ statusCode: null, error: `no answer within ${timeoutMs} ms` }),
      );
      const latency = (): number => random.int(5, 200);
      if (this.#down(scope.now())) {
        scope.at(scope.now() + latency(), () => finish(this.#refused()));
        return;
      }
      if (fireRule(this.#sink, 'webhook_lost', null) !== null) return;
      const delayed = fireRule(this.#sink, 'webhook_delayed', null);
      scope.at(scope.now() + latency() + (delayed?.arg ?? 0), () => {
        if (this.#down(scope.now())) {
          finish(this.#refused());
          return;
        }
        this.#receive(body, headers);
        if (fireRule(this.#sink, 'webhook_duplicated', null) !== null) {
          // Its 2xx answer is lost (the sender times out and sends it again), or it arrives twice.
          if (random.chance(0.5)) return;
          scope.at(scope.now() + latency(), () => this.#receive(body, headers));
        }
        scope.at(scope.now() + latency(), () => finish({ statusCode: 200, error: null }));
      });
    });
  };
}
