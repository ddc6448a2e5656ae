import { expect } from 'vitest';
import type { SuiteContext } from './context.js';
import { claimed, created, mustGet, rejectsWith, T0, TOOL } from './fixtures.js';

const ASK = { method: 'elicitation/create', params: { message: 'continue?' } };
const RESULT = { content: [] };

/** S3: every worker write is fenced by lease owner and epoch. */
export function fencingCases({ store, test }: SuiteContext): void {
  test('S3: a claim after lease expiry bumps the epoch, not before', async () => {
    const { task: first } = await claimed(store(), await created(store()), { leaseMs: 1_000 });
    expect(first.epoch).toBe(1);
    expect(first).toMatchObject({ leaseOwner: 'worker-1', leaseExpiresAt: T0 + 1_000 });
    const early = await store().claim({ workerId: 'worker-2', now: T0 + 999, leaseMs: 1_000, limit: 5, tools: [TOOL] });
    expect(early).toEqual([]);
    const { task: second } = await claimed(store(), first, { workerId: 'worker-2', now: T0 + 1_000 });
    expect(second.epoch).toBe(2);
    expect(second.leaseOwner).toBe('worker-2');
  });

  test('a claim names the lease owner it replaced: the expired node on a re-claim, none on a first claim or after a release', async () => {
    const first = await store().claim({ workerId: 'node-a', now: T0, leaseMs: 1_000, limit: 1, tools: [TOOL] });
    expect(first).toEqual([]);
    const task = await created(store());
    const [one] = await store().claim({ workerId: 'node-a', now: T0, leaseMs: 1_000, limit: 1, tools: [TOOL] });
    expect(one).toMatchObject({ id: task.id, epoch: 1, leaseOwner: 'node-a', previousLeaseOwner: null });
    const [two] = await store().claim({ workerId: 'node-b', now: T0 + 1_000, leaseMs: 1_000, limit: 1, tools: [TOOL] });
    expect(two).toMatchObject({ id: task.id, epoch: 2, leaseOwner: 'node-b', previousLeaseOwner: 'node-a' });
    // The store keeps only the current owner: a read never carries the previous one.
    expect(await mustGet(store(), task.id, T0 + 1_000)).not.toHaveProperty('previousLeaseOwner');
    await store().release({ taskId: task.id, workerId: 'node-b', epoch: 2 }, T0 + 1_001);
    const [three] = await store().claim({
      workerId: 'node-c',
      now: T0 + 1_002,
      leaseMs: 1_000,
      limit: 1,
      tools: [TOOL],
    });
    expect(three).toMatchObject({ id: task.id, epoch: 3, leaseOwner: 'node-c', previousLeaseOwner: null });
  });

  test('S3: writes with a stale epoch reject lease_lost and change nothing', async () => {
    const { fence: stale } = await claimed(store(), await created(store()), { leaseMs: 1_000 });
    const { fence: current } = await claimed(store(), await mustGet(store(), stale.taskId), {
      workerId: 'worker-1',
      now: T0 + 2_000,
    });
    expect(current.epoch).toBe(stale.epoch + 1);
    const before = await mustGet(store(), stale.taskId, T0 + 2_000);
    const now = T0 + 2_001;
    await rejectsWith(store().heartbeat(stale, 5_000, now), 'lease_lost');
    await rejectsWith(store().progress(stale, { done: 1 }, now), 'lease_lost');
    await rejectsWith(store().checkpoint(stale, { step: 9 }, now), 'lease_lost');
    await rejectsWith(store().requestInput(stale, 'q', ASK, now), 'lease_lost');
    await rejectsWith(
      store().finish(stale, { status: 'completed', result: RESULT, resultDigest: 'x' }, now),
      'lease_lost',
    );
    await rejectsWith(store().release(stale, now), 'lease_lost');
    expect(await mustGet(store(), stale.taskId, now)).toEqual(before);
  });

  test('S3: writes from another workerId at the current epoch reject lease_lost and change nothing', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const impostor = { ...fence, workerId: 'worker-9' };
    const before = await mustGet(store(), fence.taskId);
    await rejectsWith(store().heartbeat(impostor, 5_000, T0 + 1), 'lease_lost');
    await rejectsWith(store().progress(impostor, { done: 1 }, T0 + 1), 'lease_lost');
    await rejectsWith(store().checkpoint(impostor, 'x', T0 + 1), 'lease_lost');
    await rejectsWith(store().requestInput(impostor, 'q', ASK, T0 + 1), 'lease_lost');
    await rejectsWith(
      store().finish(impostor, { status: 'failed', error: { code: 1, message: 'x' } }, T0 + 1),
      'lease_lost',
    );
    await rejectsWith(store().release(impostor, T0 + 1), 'lease_lost');
    expect(await mustGet(store(), fence.taskId, T0 + 1)).toEqual(before);
  });

  test('S3: a write to a task that was never claimed rejects lease_lost', async () => {
    const task = await created(store());
    await rejectsWith(store().heartbeat({ taskId: task.id, workerId: 'worker-1', epoch: 0 }, 1, T0), 'lease_lost');
    await rejectsWith(store().release({ taskId: 'no-such-task', workerId: 'worker-1', epoch: 1 }, T0), 'lease_lost');
  });

  test('S3: concurrent claims never hand out the same task twice at the same epoch', async () => {
    const tasks = 20;
    for (let i = 0; i < tasks; i += 1) await created(store(), { now: T0 + i });
    const claims = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        store().claim({ workerId: `worker-${i}`, now: T0 + 100, leaseMs: 60_000, limit: 3, tools: [TOOL] }),
      ),
    );
    const handedOut = claims.flat().map((t) => `${t.id}@${t.epoch}`);
    expect(new Set(handedOut).size).toBe(handedOut.length);
    // No lease expired in between, so each task went to exactly one worker, at epoch 1.
    expect(handedOut.length).toBe(tasks);
    expect(claims.flat().every((t) => t.epoch === 1)).toBe(true);
    // Each holder's fence is the one stored.
    for (const [i, batch] of claims.entries()) {
      for (const t of batch) expect((await mustGet(store(), t.id, T0 + 100)).leaseOwner).toBe(`worker-${i}`);
    }
  });

  test('S3: a released task is claimable at once with a higher epoch', async () => {
    const { fence } = await claimed(store(), await created(store()), { leaseMs: 60_000 });
    await store().release(fence, T0 + 1);
    const released = await mustGet(store(), fence.taskId, T0 + 1);
    expect(released).toMatchObject({ status: 'working', leaseOwner: null, leaseExpiresAt: null, epoch: 1 });
    const { task } = await claimed(store(), released, { workerId: 'worker-2', now: T0 + 2 });
    expect(task.epoch).toBe(2);
  });
}
