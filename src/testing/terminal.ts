import { expect } from 'vitest';
import type { SuiteContext } from './context.js';
import { claimed, created, mustGet, OWNER, rejectsWith, T0 } from './fixtures.js';

const RESULT = { content: [{ type: 'text', text: 'done' }] };
const ERROR = { code: -32603, message: 'boom' };

/** S2 terminal immutability and S4 late outcomes. */
export function terminalCases({ store, test }: SuiteContext): void {
  test('S2: finish records completed with result, digest, terminalAt and releases the lease', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const outcome = await store().finish(fence, { status: 'completed', result: RESULT, resultDigest: 'rd' }, T0 + 5);
    expect(outcome.outcome).toBe('recorded');
    const stored = await mustGet(store(), fence.taskId, T0 + 5);
    expect(stored).toEqual(outcome.task);
    expect(stored).toMatchObject({ status: 'completed', result: RESULT, resultDigest: 'rd', error: null });
    expect(stored).toMatchObject({ terminalAt: T0 + 5, updatedAt: T0 + 5, leaseOwner: null, leaseExpiresAt: null });
  });

  test('S2: finish failed records the error and status message', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const outcome = await store().finish(fence, { status: 'failed', error: ERROR, statusMessage: 'it broke' }, T0 + 5);
    expect(outcome.outcome).toBe('recorded');
    const stored = await mustGet(store(), fence.taskId, T0 + 5);
    expect(stored).toMatchObject({ status: 'failed', error: ERROR, statusMessage: 'it broke', result: null });
  });

  test('S4: finish after cancel is kept as lateOutcome only; the status stays cancelled', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const cancel = await store().cancel(OWNER, fence.taskId, T0 + 1);
    expect(cancel.outcome).toBe('cancelled');
    expect(cancel.task).toMatchObject({ status: 'cancelled', cancelRequested: true, terminalAt: T0 + 1 });
    const outcome = await store().finish(fence, { status: 'completed', result: RESULT, resultDigest: 'rd' }, T0 + 2);
    expect(outcome.outcome).toBe('late');
    if (outcome.outcome !== 'late') return;
    expect(outcome.late).toEqual({ epoch: fence.epoch, at: T0 + 2, result: RESULT });
    const stored = await mustGet(store(), fence.taskId, T0 + 2);
    expect(stored).toMatchObject({ status: 'cancelled', result: null, resultDigest: null, terminalAt: T0 + 1 });
    expect(stored.lateOutcome).toEqual(outcome.late);
    expect(stored.leaseOwner).toBeNull();
  });

  test('S2: cancel after completed answers already_terminal and changes nothing', async () => {
    const { fence } = await claimed(store(), await created(store()));
    await store().finish(fence, { status: 'completed', result: RESULT, resultDigest: 'rd' }, T0 + 1);
    const before = await mustGet(store(), fence.taskId, T0 + 1);
    const cancel = await store().cancel(OWNER, fence.taskId, T0 + 2);
    expect(cancel.outcome).toBe('already_terminal');
    expect(cancel.task).toEqual(before);
    expect(await mustGet(store(), fence.taskId, T0 + 2)).toEqual(before);
  });

  test('S2: a second finish is rejected and the first outcome stands', async () => {
    const { fence } = await claimed(store(), await created(store()));
    await store().finish(fence, { status: 'completed', result: RESULT, resultDigest: 'rd' }, T0 + 1);
    const before = await mustGet(store(), fence.taskId, T0 + 1);
    await rejectsWith(store().finish(fence, { status: 'failed', error: ERROR }, T0 + 2), 'lease_lost');
    expect(await mustGet(store(), fence.taskId, T0 + 2)).toEqual(before);
  });

  test('S2: a second cancel answers already_terminal and keeps the first terminalAt', async () => {
    const task = await created(store());
    await store().cancel(OWNER, task.id, T0 + 1);
    const again = await store().cancel(OWNER, task.id, T0 + 9);
    expect(again.outcome).toBe('already_terminal');
    expect(again.task).toMatchObject({ status: 'cancelled', terminalAt: T0 + 1, updatedAt: T0 + 1 });
  });

  test('S2: a cancelled task is never claimed again', async () => {
    const task = await created(store());
    await store().cancel(OWNER, task.id, T0 + 1);
    const claims = await store().claim({ workerId: 'w', now: T0 + 2, leaseMs: 1_000, limit: 10, tools: [task.tool] });
    expect(claims).toEqual([]);
  });

  test('S2: progress, checkpoint and requestInput on a cancelled task reject already_terminal', async () => {
    const { fence } = await claimed(store(), await created(store()));
    await store().cancel(OWNER, fence.taskId, T0 + 1);
    const before = await mustGet(store(), fence.taskId, T0 + 1);
    await rejectsWith(store().progress(fence, { done: 1 }, T0 + 2), 'already_terminal');
    await rejectsWith(store().checkpoint(fence, { step: 1 }, T0 + 2), 'already_terminal');
    const ask = { method: 'elicitation/create', params: { message: 'ok?' } };
    await rejectsWith(store().requestInput(fence, 'q1', ask, T0 + 2), 'already_terminal');
    expect(await mustGet(store(), fence.taskId, T0 + 2)).toEqual(before);
  });
}
