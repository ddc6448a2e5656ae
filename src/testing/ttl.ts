import { expect } from 'vitest';
import type { SuiteContext } from './context.js';
import { claimed, created, mustGet, OWNER, T0 } from './fixtures.js';

const DONE = { status: 'completed', result: { content: [] }, resultDigest: 'd' } as const;

/** S7: TTL never deletes a working task; a terminal one is readable until its retention ends. */
export function ttlCases({ store, test }: SuiteContext): void {
  test('S7: a working task past createdAt + ttl is still returned and never swept', async () => {
    const task = await created(store(), { ttlMs: 1_000 });
    const muchLater = T0 + 1_000_000_000;
    expect(await store().sweepExpired(muchLater, 100)).toBe(0);
    expect(await mustGet(store(), task.id, muchLater)).toEqual(task);
    expect((await store().list(OWNER, { limit: 10 }, muchLater)).tasks.map((t) => t.id)).toEqual([task.id]);
    const { task: held } = await claimed(store(), task, { now: muchLater });
    expect(held.status).toBe('working');
  });

  test('S7: a terminal task past its expiry is null on get, gone from list, and swept', async () => {
    const task = await created(store(), { ttlMs: 60_000 });
    const { fence } = await claimed(store(), task);
    await store().finish(fence, DONE, T0 + 1_000);
    // Finished before the TTL passed: readable until the later of createdAt + ttl and a 60 s grace.
    const expiry = T0 + 61_000;
    expect(await store().sweepExpired(expiry - 1, 100)).toBe(0);
    expect((await mustGet(store(), task.id, expiry - 1)).status).toBe('completed');
    expect(await store().get(OWNER, task.id, expiry)).toBeNull();
    expect((await store().list(OWNER, { limit: 10 }, expiry)).tasks).toEqual([]);
    expect(await store().sweepExpired(expiry, 100)).toBe(1);
    expect(await store().sweepExpired(expiry, 100)).toBe(0);
    expect(await store().get(OWNER, task.id, expiry - 1)).toBeNull();
  });

  test('S7: keepAliveMs counts from terminalAt, not from creation', async () => {
    const task = await created(store(), { ttlMs: null, keepAliveMs: 5_000, wire: 'sep-1391' });
    const late = T0 + 100_000;
    expect(await mustGet(store(), task.id, late)).toEqual(task);
    await store().cancel(OWNER, task.id, late);
    expect((await mustGet(store(), task.id, late + 4_999)).status).toBe('cancelled');
    expect(await store().sweepExpired(late + 4_999, 100)).toBe(0);
    expect(await store().get(OWNER, task.id, late + 5_000)).toBeNull();
    expect(await store().sweepExpired(late + 5_000, 100)).toBe(1);
  });

  test('S7: a task without ttl or keepAlive never expires', async () => {
    const task = await created(store(), { ttlMs: null });
    await store().cancel(OWNER, task.id, T0 + 1);
    expect(await store().sweepExpired(Number.MAX_SAFE_INTEGER, 100)).toBe(0);
    expect(await store().get(OWNER, task.id, Number.MAX_SAFE_INTEGER)).not.toBeNull();
  });

  test('S7: sweepExpired deletes at most limit tasks per call', async () => {
    for (let i = 0; i < 5; i += 1) {
      const task = await created(store(), { ttlMs: 1_000 });
      await store().cancel(OWNER, task.id, T0 + 1);
    }
    const later = T0 + 1_000_000;
    expect(await store().sweepExpired(later, 2)).toBe(2);
    expect(await store().sweepExpired(later, 2)).toBe(2);
    expect(await store().sweepExpired(later, 2)).toBe(1);
    expect(await store().sweepExpired(later, 2)).toBe(0);
  });
}
