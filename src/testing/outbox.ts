import { expect } from 'vitest';
import type { WebhookEndpoint } from '../core/webhook.js';
import type { WebhookOutbox } from '../store/outbox-port.js';
import type { SuiteContext } from './context.js';
import { claimed, created, OWNER, rejectsWith, STRANGER, T0 } from './fixtures.js';

const TERMINAL_ONLY: WebhookEndpoint = {
  url: 'https://hooks.example/terminal',
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  events: 'terminal',
  source: 'call',
};
const EVERY: WebhookEndpoint = { ...TERMINAL_ONLY, url: 'https://hooks.example/all', events: 'all', source: 'server' };
const DONE = { status: 'completed', result: { content: [] }, resultDigest: 'd' } as const;

/** The webhook outbox (issue 32): rows in the commit of the status change, claims with leases, fenced records. */
export function outboxCases({ store, test }: SuiteContext): void {
  const outbox = (): WebhookOutbox => {
    const webhooks = store().webhooks;
    expect(webhooks, 'this backend has no webhook outbox').toBeDefined();
    return webhooks as WebhookOutbox;
  };

  test('webhooks: each status event gets one outbox row per endpoint whose event set takes it', async () => {
    const task = await created(store(), { webhooks: [TERMINAL_ONLY, EVERY] });
    const { fence } = await claimed(store(), task);
    await store().progress(fence, { done: 1 }, T0 + 1);
    await store().requestInput(fence, 'k', { method: 'elicitation/create', params: {} }, T0 + 2);
    await store().respond(OWNER, task.id, { k: 1 }, T0 + 3);
    await store().finish(fence, DONE, T0 + 4);
    const rows = await outbox().readDeliveries(OWNER, task.id);
    expect(rows.map((r) => [r.seq, r.endpoint, r.status, r.url, r.state, r.attempts])).toEqual([
      [1, 2, 'working', EVERY.url, 'pending', 0],
      [4, 2, 'input_required', EVERY.url, 'pending', 0],
      [6, 2, 'working', EVERY.url, 'pending', 0],
      [7, 1, 'completed', TERMINAL_ONLY.url, 'pending', 0],
      [7, 2, 'completed', EVERY.url, 'pending', 0],
    ]);
    expect(rows.at(-1)).toMatchObject({ owner: OWNER, tool: task.tool, eventAt: T0 + 4, secret: EVERY.secret });
    expect(await outbox().readDeliveries(STRANGER, task.id)).toEqual([]);
    // A task without webhooks adds none.
    const plain = await created(store());
    const { fence: other } = await claimed(store(), plain);
    await store().finish(other, DONE, T0 + 5);
    expect(await outbox().readDeliveries(null, plain.id)).toEqual([]);
  });

  test('webhooks: a claim leases due rows to one node; a record is fenced by that claim', async () => {
    const task = await created(store(), { webhooks: [TERMINAL_ONLY] });
    const { fence } = await claimed(store(), task);
    await store().cancel(OWNER, task.id, T0 + 1);
    const [first, ...none] = await outbox().claimDeliveries({ node: 'a', now: T0 + 2, leaseMs: 1_000, limit: 10 });
    expect(none).toEqual([]);
    expect(first).toMatchObject({ taskId: task.id, seq: 2, status: 'cancelled', attempts: 0 });
    // Leased: another node finds nothing until the lease lapses.
    expect(await outbox().claimDeliveries({ node: 'b', now: T0 + 3, leaseMs: 1_000, limit: 10 })).toEqual([]);
    const stolen = await outbox().claimDeliveries({ node: 'b', now: T0 + 1_002, leaseMs: 1_000, limit: 10 });
    expect(stolen).toHaveLength(1);
    const attempt = { attempt: 1, at: T0 + 1_003, node: 'a', statusCode: 500, error: null, durationMs: 4 };
    await rejectsWith(
      outbox().recordAttempt(first!, 'a', attempt, { state: 'pending', nextAt: T0 + 5_000 }),
      'lease_lost',
    );
    await outbox().recordAttempt(stolen[0]!, 'b', { ...attempt, node: 'b' }, { state: 'pending', nextAt: T0 + 5_000 });
    expect(await outbox().claimDeliveries({ node: 'a', now: T0 + 4_999, leaseMs: 1_000, limit: 10 })).toEqual([]);
    const again = await outbox().claimDeliveries({ node: 'a', now: T0 + 5_000, leaseMs: 1_000, limit: 10 });
    expect(again.map((d) => d.attempts)).toEqual([1]);
    await outbox().recordAttempt(
      again[0]!,
      'a',
      { ...attempt, attempt: 2, at: T0 + 5_001, statusCode: 204 },
      { state: 'delivered', nextAt: null },
    );
    const [row] = await outbox().readDeliveries(OWNER, task.id);
    expect(row).toMatchObject({ state: 'delivered', attempts: 2, doneAt: T0 + 5_001, nextAt: null });
    expect(row?.attemptLog.map((a) => [a.attempt, a.node, a.statusCode])).toEqual([
      [1, 'b', 500],
      [2, 'a', 204],
    ]);
    expect(await outbox().deliveryStats()).toEqual({ pending: 0, oldestPendingAt: null });
    void fence;
  });

  test('webhooks: rows outlive their swept task; done rows are swept by their own retention', async () => {
    const task = await created(store(), { webhooks: [TERMINAL_ONLY], ttlMs: 1_000 });
    const { fence } = await claimed(store(), task);
    await store().finish(fence, DONE, T0 + 1);
    expect(await outbox().deliveryStats()).toEqual({ pending: 1, oldestPendingAt: T0 + 1 });
    expect(await store().sweepExpired(T0 + 120_000, 10)).toBe(1);
    const [due] = await outbox().claimDeliveries({ node: 'a', now: T0 + 120_001, leaseMs: 1_000, limit: 1 });
    expect(due).toMatchObject({ taskId: task.id, status: 'completed' });
    const attempt = { attempt: 1, at: T0 + 120_002, node: 'a', statusCode: 200, error: null, durationMs: 1 };
    await outbox().recordAttempt(due!, 'a', attempt, { state: 'delivered', nextAt: null });
    expect(await outbox().sweepDeliveries(T0 + 120_001, 10)).toBe(0);
    expect(await outbox().sweepDeliveries(T0 + 120_002, 10)).toBe(1);
    expect(await outbox().readDeliveries(null, task.id)).toEqual([]);
  });
}
