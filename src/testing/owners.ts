import { expect } from 'vitest';
import type { SuiteContext } from './context.js';
import { claimed, created, newTask, rejectsWith, T0 } from './fixtures.js';

const LEGACY = 'auth:alice';
const NEW = 'token:alice';

/** The owner migration when principals change form (`auth:<id>` to `token:<id>`): S5, S6 and S8 hold across it. */
export function ownerCases({ store, test }: SuiteContext): void {
  test('S8: renameOwners moves tasks, used keys and tombstones to the new owner; the old name sees nothing', async () => {
    const keyed = await created(store(), { owner: LEGACY, submissionKey: 'k-1', args: { a: 1 } });
    const plain = await created(store(), { owner: LEGACY });
    await created(store(), { owner: 'auth:bob' });
    const near = await created(store(), { owner: 'authority' }); // shares the letters, not the prefix
    await store().lookupKey(LEGACY, 'burned', T0);
    expect(await store().countOwners('auth:')).toBe(3);

    expect(await store().renameOwners('auth:', 'token:')).toBe(3);
    expect(await store().countOwners('auth:')).toBe(0);
    expect(await store().countOwners('token:')).toBe(3);
    expect(await store().get(LEGACY, keyed.id, T0)).toBeNull();
    expect(await store().get(NEW, plain.id, T0)).toMatchObject({ id: plain.id, owner: NEW });
    expect(await store().get('authority', near.id, T0)).not.toBeNull();
    // S5: the key follows its task; S6: the tombstone follows its owner.
    expect(await store().lookupKey(NEW, 'k-1', T0)).toMatchObject({ kind: 'found', task: { id: keyed.id } });
    const again = await store().create(newTask({ owner: NEW, submissionKey: 'k-1', args: { a: 1 } }));
    expect(again).toMatchObject({ created: false, task: { id: keyed.id } });
    await rejectsWith(store().create(newTask({ owner: NEW, submissionKey: 'burned' })), 'submission_key_burned');
    // A second run finds nothing left to do.
    expect(await store().renameOwners('auth:', 'token:')).toBe(0);
  });

  test('S5: a task whose new owner already holds its key keeps its old owner, and so does the key', async () => {
    const old = await created(store(), { owner: LEGACY, submissionKey: 'shared', args: { v: 'old' } });
    const current = await created(store(), { owner: NEW, submissionKey: 'shared', args: { v: 'new' } });
    const other = await created(store(), { owner: LEGACY, submissionKey: 'other' });
    expect(await store().renameOwners('auth:', 'token:')).toBe(1);
    expect(await store().get(LEGACY, old.id, T0)).toMatchObject({ owner: LEGACY });
    expect(await store().lookupKey(NEW, 'shared', T0)).toMatchObject({ kind: 'found', task: { id: current.id } });
    expect(await store().lookupKey(LEGACY, 'shared', T0)).toMatchObject({ kind: 'found', task: { id: old.id } });
    expect(await store().lookupKey(NEW, 'other', T0)).toMatchObject({ kind: 'found', task: { id: other.id } });
  });

  test('S3: a claimed task keeps its lease and epoch across the rename; its fenced writes still land', async () => {
    const task = await created(store(), { owner: LEGACY });
    const { fence } = await claimed(store(), task);
    await store().renameOwners('auth:', 'token:');
    const beat = await store().heartbeat(fence, 30_000, T0 + 1);
    expect(beat).toMatchObject({ owner: NEW, epoch: fence.epoch, leaseOwner: fence.workerId });
    await store().finish(fence, { status: 'completed', result: { content: [] }, resultDigest: 'd' }, T0 + 2);
    expect(await store().get(NEW, task.id, T0 + 3)).toMatchObject({ status: 'completed' });
  });
}
