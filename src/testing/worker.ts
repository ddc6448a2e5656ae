import { expect } from 'vitest';
import type { SuiteContext } from './context.js';
import { claimed, created, mustGet, newTask, OWNER, T0, TOOL } from './fixtures.js';

/** Claims, heartbeats, release, checkpoints and progress: the runner's side of the port. */
export function workerCases({ store, test }: SuiteContext): void {
  test('claim: only tasks of the given tools, oldest first, at most limit', async () => {
    const a = await created(store(), { now: T0 });
    const other = await created(store(), { tool: 'other', now: T0 + 1 });
    const b = await created(store(), { now: T0 + 2 });
    const c = await created(store(), { now: T0 + 3 });
    const first = await store().claim({ workerId: 'w', now: T0 + 10, leaseMs: 1_000, limit: 2, tools: [TOOL] });
    expect(first.map((t) => t.id)).toEqual([a.id, b.id]);
    const rest = await store().claim({ workerId: 'w', now: T0 + 10, leaseMs: 1_000, limit: 5, tools: [TOOL] });
    expect(rest.map((t) => t.id)).toEqual([c.id]);
    expect(await store().claim({ workerId: 'w', now: T0 + 10, leaseMs: 1_000, limit: 5, tools: ['none'] })).toEqual([]);
    expect(await store().claim({ workerId: 'w', now: T0 + 10, leaseMs: 1_000, limit: 5, tools: [] })).toEqual([]);
    const others = await store().claim({ workerId: 'w', now: T0 + 10, leaseMs: 1_000, limit: 5, tools: ['other'] });
    expect(others.map((t) => t.id)).toEqual([other.id]);
  });

  test('claim: a task waiting for input is claimable again after its lease expires', async () => {
    const { fence } = await claimed(store(), await created(store()), { leaseMs: 1_000 });
    await store().requestInput(fence, 'q', { method: 'elicitation/create', params: {} }, T0 + 1);
    const { task } = await claimed(store(), await mustGet(store(), fence.taskId), { now: T0 + 1_000 });
    expect(task).toMatchObject({ status: 'input_required', epoch: 2 });
  });

  test('heartbeat: extends the lease so no other worker can claim the task', async () => {
    const { fence } = await claimed(store(), await created(store()), { leaseMs: 1_000 });
    const beat = await store().heartbeat(fence, 1_000, T0 + 900);
    expect(beat).toMatchObject({ leaseOwner: 'worker-1', leaseExpiresAt: T0 + 1_900, epoch: fence.epoch });
    expect(beat.updatedAt).toBe(T0);
    const steal = await store().claim({ workerId: 'w2', now: T0 + 1_500, leaseMs: 1_000, limit: 1, tools: [TOOL] });
    expect(steal).toEqual([]);
    expect((await mustGet(store(), fence.taskId, T0 + 1_500)).leaseExpiresAt).toBe(T0 + 1_900);
  });

  test('heartbeat: after a cancel it still succeeds and returns the cancelled status', async () => {
    const { fence } = await claimed(store(), await created(store()));
    await store().cancel(OWNER, fence.taskId, T0 + 1);
    const beat = await store().heartbeat(fence, 1_000, T0 + 2);
    expect(beat).toMatchObject({ status: 'cancelled', cancelRequested: true, leaseOwner: 'worker-1' });
  });

  test('release: clears the lease without changing the status', async () => {
    const { fence } = await claimed(store(), await created(store()));
    await store().requestInput(fence, 'q', { method: 'elicitation/create', params: {} }, T0 + 1);
    const before = await mustGet(store(), fence.taskId, T0 + 1);
    await store().release(fence, T0 + 2);
    const after = await mustGet(store(), fence.taskId, T0 + 2);
    expect(after).toEqual({ ...before, leaseOwner: null, leaseExpiresAt: null });
  });

  test('checkpoint and progress persist and a re-claim sees the checkpoint', async () => {
    const { fence } = await claimed(store(), await created(store(), { statusMessage: 'queued' }), { leaseMs: 1_000 });
    await store().checkpoint(fence, { step: 3, seen: ['a', 'b'] }, T0 + 1);
    await store().progress(fence, { done: 3, total: 10, message: 'step 3' }, T0 + 2);
    const stored = await mustGet(store(), fence.taskId, T0 + 2);
    expect(stored).toMatchObject({
      checkpoint: { step: 3, seen: ['a', 'b'] },
      progress: { done: 3, total: 10, message: 'step 3' },
      statusMessage: 'step 3',
      status: 'working',
      updatedAt: T0 + 2,
    });
    await store().progress(fence, { done: 4 }, T0 + 3);
    expect(await mustGet(store(), fence.taskId, T0 + 3)).toMatchObject({
      progress: { done: 4 },
      statusMessage: 'step 3',
    });
    const { task } = await claimed(store(), stored, { workerId: 'worker-2', now: T0 + 5_000 });
    expect(task.checkpoint).toEqual({ step: 3, seen: ['a', 'b'] });
  });

  test('create with a lease: created claimed in the same write (epoch 1), so no other claim takes it', async () => {
    const { created: made, task } = await store().create(
      newTask({ submissionKey: 'leased', lease: { workerId: 'worker-1', leaseMs: 1_000 } }),
    );
    expect(made).toBe(true);
    expect(task).toMatchObject({ status: 'working', leaseOwner: 'worker-1', leaseExpiresAt: T0 + 1_000, epoch: 1 });
    expect(await mustGet(store(), task.id)).toEqual(task);
    expect(await store().claim({ workerId: 'w2', now: T0 + 999, leaseMs: 1_000, limit: 5, tools: [TOOL] })).toEqual([]);
    // The fence of the creating worker holds, like a claim's (S3).
    const fence = { taskId: task.id, workerId: 'worker-1', epoch: 1 };
    await store().progress(fence, { done: 1 }, T0 + 1);
    // Its lease expires like a claim's: another worker re-claims at epoch 2 and fences the first out.
    const { task: again } = await claimed(store(), task, { workerId: 'w2', now: T0 + 1_000 });
    expect(again.epoch).toBe(2);
  });

  test('create with a lease: a create answered by an existing task for its key takes no lease', async () => {
    const first = await created(store(), { submissionKey: 'k', args: { a: 1 } });
    const retry = await store().create(
      newTask({ submissionKey: 'k', args: { a: 1 }, now: T0 + 5, lease: { workerId: 'worker-1', leaseMs: 1_000 } }),
    );
    expect(retry).toEqual({ created: false, task: first });
    expect(await mustGet(store(), first.id, T0 + 5)).toMatchObject({ leaseOwner: null, epoch: 0 });
  });
}
