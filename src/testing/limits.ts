import { expect } from 'vitest';
import type { SuiteContext } from './context.js';
import { claimed, created, newTask, OWNER, rejectsWith, STRANGER, T0 } from './fixtures.js';

/** Tombstone retention (S6 for a bounded time) and the live-task count behind the per-caller cap (T-79). */
export function limitsCases({ store, test }: SuiteContext): void {
  test('S6: sweepTombstones deletes tombstones burned at or before the bound, then the key is usable again', async () => {
    await store().lookupKey(OWNER, 'old', T0);
    await store().lookupKey(OWNER, 'young', T0 + 1000);
    expect(await store().sweepTombstones(T0 + 500, 100)).toBe(1);
    // The young one is still a proof; the old one is forgotten.
    await rejectsWith(store().create(newTask({ submissionKey: 'young', now: T0 + 2000 })), 'submission_key_burned');
    const reused = await store().create(newTask({ submissionKey: 'old', now: T0 + 2000 }));
    expect(reused.created).toBe(true);
    expect(await store().sweepTombstones(T0 + 500, 100)).toBe(0);
  });

  test('S5: sweepTombstones never deletes a key a task used, and honours its limit', async () => {
    const task = await created(store(), { submissionKey: 'used', args: { a: 1 } });
    for (let i = 0; i < 3; i++) await store().lookupKey(OWNER, `burned-${i}`, T0);
    expect(await store().sweepTombstones(T0 + 10_000_000, 2)).toBe(2);
    expect(await store().sweepTombstones(T0 + 10_000_000, 2)).toBe(1);
    const again = await store().create(newTask({ submissionKey: 'used', args: { a: 1 }, now: T0 + 5 }));
    expect(again).toMatchObject({ created: false, task: { id: task.id } });
  });

  test('T-79: countLive counts the owner’s working and input_required tasks, not finished ones or others’', async () => {
    const a = await created(store(), { id: 'live-a' });
    await created(store(), { id: 'live-b' });
    await created(store(), { id: 'theirs', owner: STRANGER });
    expect(await store().countLive(OWNER)).toBe(2);
    await store().cancel(OWNER, a.id, T0 + 1);
    expect(await store().countLive(OWNER)).toBe(1);
    const c = await created(store(), { id: 'live-c', tool: 'other-tool' });
    const { fence } = await claimed(store(), c);
    await store().finish(fence, { status: 'completed', result: { content: [] }, resultDigest: 'd' }, T0 + 2);
    expect(await store().countLive(OWNER)).toBe(1);
    expect(await store().countLive(STRANGER)).toBe(1);
    expect(await store().countLive('nobody')).toBe(0);
  });

  test('T-79: a create with maxLive is refused once the owner has that many live tasks, in the create itself', async () => {
    const first = await created(store(), { id: 'cap-1', maxLive: 2 });
    await created(store(), { id: 'cap-2', submissionKey: 'cap-key', args: { k: 1 }, maxLive: 2 });
    await created(store(), { id: 'other-owner', owner: STRANGER, maxLive: 2 });
    const refused = await rejectsWith(store().create(newTask({ id: 'cap-3', maxLive: 2 })), 'resource_exhausted');
    expect(refused.retryable).toBe(true);
    expect(refused.details).toMatchObject({ reason: 'too_many_active_tasks', limit: 2 });
    expect(await store().get(OWNER, 'cap-3', T0)).toBeNull();
    // A refused keyed create claims nothing: the key stays unused, not burned.
    await rejectsWith(
      store().create(newTask({ id: 'cap-4', submissionKey: 'fresh', maxLive: 2 })),
      'resource_exhausted',
    );
    expect(await store().lookupKey(OWNER, 'fresh', T0)).toEqual({ kind: 'never_created' });
    // A retry of an accepted create (same key, same request) gets its task whatever the count (S5).
    const again = await store().create(newTask({ id: 'cap-5', submissionKey: 'cap-key', args: { k: 1 }, maxLive: 2 }));
    expect(again).toMatchObject({ created: false, task: { id: 'cap-2' } });
    // Without maxLive there is no cap; a finished task frees its place.
    await created(store(), { id: 'no-cap' });
    await store().cancel(OWNER, first.id, T0 + 1);
    await store().cancel(OWNER, 'no-cap', T0 + 1);
    await created(store(), { id: 'cap-6', maxLive: 2, now: T0 + 2 });
  });
}
