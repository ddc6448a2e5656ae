import { expect } from 'vitest';
import { requestDigest } from '../core/digest.js';
import type { SuiteContext } from './context.js';
import { claimed, created, mustGet, newTask, OWNER, rejectsWith, STRANGER, T0 } from './fixtures.js';

/** S5 submission keys and S6 burned keys. */
export function idempotencyCases({ store, test }: SuiteContext): void {
  test('S5: same key and digest returns the existing task with created:false', async () => {
    const first = await created(store(), { submissionKey: 'key-1', args: { a: 1 } });
    const retry = await store().create(newTask({ submissionKey: 'key-1', args: { a: 1 }, now: T0 + 5 }));
    expect(retry.created).toBe(false);
    expect(retry.task).toEqual(first);
    const page = await store().list(OWNER, { limit: 100 }, T0 + 5);
    expect(page.tasks.map((t) => t.id)).toEqual([first.id]);
  });

  test('S5: same key with a different digest rejects submission_key_conflict and creates nothing', async () => {
    const first = await created(store(), { submissionKey: 'key-1', args: { a: 1 } });
    const other = newTask({ submissionKey: 'key-1', args: { a: 2 } });
    expect(other.requestDigest).not.toBe(first.requestDigest);
    await rejectsWith(store().create(other), 'submission_key_conflict');
    expect(await store().get(OWNER, other.id, T0)).toBeNull();
    expect(await mustGet(store(), first.id)).toEqual(first);
  });

  test('S5: the same key under another owner is independent', async () => {
    const mine = await created(store(), { submissionKey: 'shared', args: { a: 1 } });
    const theirs = await store().create(newTask({ owner: STRANGER, submissionKey: 'shared', args: { a: 2 } }));
    expect(theirs.created).toBe(true);
    expect(theirs.task.id).not.toBe(mine.id);
    const lookup = await store().lookupKey(STRANGER, 'shared', T0);
    expect(lookup.kind === 'found' && lookup.task.id).toBe(theirs.task.id);
  });

  test('S6: lookupKey of an unused key answers never_created and burns it', async () => {
    expect(await store().lookupKey(OWNER, 'key-late', T0)).toEqual({ kind: 'never_created' });
    const late = newTask({ submissionKey: 'key-late', now: T0 + 1 });
    await rejectsWith(store().create(late), 'submission_key_burned');
    expect(await store().get(OWNER, late.id, T0 + 1)).toBeNull();
    // The proof stays a proof: asking again gives the same answer.
    expect(await store().lookupKey(OWNER, 'key-late', T0 + 2)).toEqual({ kind: 'never_created' });
    // Burned for this owner only.
    expect((await store().create(newTask({ owner: STRANGER, submissionKey: 'key-late' }))).created).toBe(true);
  });

  test('S6: lookupKey of a used key answers found with the task', async () => {
    const task = await created(store(), { submissionKey: 'key-used' });
    expect(await store().lookupKey(OWNER, 'key-used', T0 + 1)).toEqual({ kind: 'found', task });
    expect(await store().lookupKey(STRANGER, 'key-used', T0 + 1)).toEqual({ kind: 'never_created' });
  });

  test('S5/S6: a key whose task expired and was swept stays spent', async () => {
    const args = { a: 1 };
    const task = await created(store(), { submissionKey: 'key-old', args, ttlMs: 1_000 });
    const { fence } = await claimed(store(), task);
    await store().finish(fence, { status: 'completed', result: { content: [] }, resultDigest: 'd' }, T0 + 10);
    const later = T0 + 10_000_000;
    expect(await store().sweepExpired(later, 100)).toBe(1);
    const again = newTask({
      submissionKey: 'key-old',
      args,
      requestDigest: requestDigest(task.tool, args),
      now: later,
    });
    await rejectsWith(store().create(again), 'submission_key_burned');
    await rejectsWith(store().lookupKey(OWNER, 'key-old', later), 'not_found');
    expect(await store().get(OWNER, again.id, later)).toBeNull();
  });
}
