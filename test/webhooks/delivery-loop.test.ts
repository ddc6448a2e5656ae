/**
 * The delivery loop on the injected clock (issue 32, loose ends): it sweeps delivered and dead rows
 * past their retention on its own (`terminus serve` never did: they stayed until deleted by hand),
 * keeps pending ones whatever their age, and refuses a lease that does not outlast an attempt.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/ports.js';
import type { WebhookEndpoint } from '../../src/core/webhook.js';
import { VirtualClock } from '../../src/sim/clock.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { WebhookOutbox } from '../../src/store/outbox-port.js';
import { claimed, created, T0 } from '../../src/testing/fixtures.js';
import { startWebhookDelivery } from '../../src/webhooks/delivery.js';
import type { PostOutcome } from '../../src/webhooks/post.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const endpoint = (url: string): WebhookEndpoint => ({ url, secret: SECRET, events: 'terminal', source: 'server' });
const DONE = { status: 'completed', result: { content: [] }, resultDigest: 'd' } as const;
const HOUR = 3_600_000;

/** Fires the clock's timers up to `at`, letting every promise they start run in between. */
async function runUntil(clock: VirtualClock, at: number): Promise<void> {
  for (;;) {
    await new Promise((resolve) => setImmediate(resolve));
    const next = clock.peek();
    if (next === null || next > at) break;
    clock.fireNext();
  }
}

describe('the webhook delivery loop', () => {
  it('sweeps delivered and dead rows past the retention, never a pending one', async () => {
    const clock = new VirtualClock(T0);
    const store = createMemoryTaskStore();
    const outbox = store.webhooks as WebhookOutbox;
    const ids: string[] = [];
    const end = async (url: string, at: number) => {
      const task = await created(store, { webhooks: [endpoint(url)] });
      const { fence } = await claimed(store, task);
      await store.finish(fence, DONE, at);
      ids.push(task.id);
    };
    const post = async (url: string): Promise<PostOutcome> => ({
      statusCode: url.startsWith('https://ok') ? 204 : 503,
      error: null,
    });
    const loop = (retryScheduleMs: number[], retentionMs: number | null, swept?: number[]) =>
      startWebhookDelivery({
        outbox,
        node: 'n1',
        clock,
        random: { next: () => 0.5 },
        logger: silentLogger,
        policy: {},
        post,
        retryScheduleMs,
        retentionMs,
        sweepEveryMs: 10 * 60_000,
        ...(swept === undefined ? {} : { onSwept: (count: number) => swept.push(count) }),
      });
    const states = async () =>
      (await Promise.all(ids.map((id) => outbox.readDeliveries(null, id)))).map((rows) => rows[0]?.state ?? 'swept');
    // At T0 one receiver answers 204 (delivered) and one 503 with no retry left (dead).
    await end('https://ok.example/', T0);
    await end('https://down.example/a', T0);
    const first = loop([], null);
    await runUntil(clock, T0 + 1_000);
    await first.stop();
    expect(await states()).toEqual(['delivered', 'dead']);
    // A receiver down since T0 + 1 s, its next attempt in 30 days: pending all along.
    const swept: number[] = [];
    const second = loop([30 * 24 * HOUR], HOUR, swept);
    try {
      await end('https://down.example/b', T0 + 1_000);
      second.wake();
      await runUntil(clock, T0 + 30 * 60_000);
      expect(await states()).toEqual(['delivered', 'dead', 'pending']);
      // An hour after they finished, the first sweep past it deletes both finished rows.
      await runUntil(clock, T0 + HOUR + 11 * 60_000);
      expect(await states()).toEqual(['swept', 'swept', 'pending']);
      expect(swept).toEqual([2]);
    } finally {
      await second.stop();
    }
  });

  it('refuses a lease that does not outlast one attempt (another node would send the row again mid-attempt)', () => {
    const clock = new VirtualClock(T0);
    const outbox = createMemoryTaskStore().webhooks as WebhookOutbox;
    const start = (leaseMs: number) =>
      startWebhookDelivery({
        outbox,
        node: 'n1',
        clock,
        random: { next: () => 0.5 },
        logger: silentLogger,
        policy: {},
        leaseMs,
        timeoutMs: 10_000,
      });
    expect(() => start(10_000)).toThrow(/leaseMs \(10000\) must exceed the attempt timeout \(10000 ms\)/);
    void start(10_001).stop();
  });
});
