import { expect } from 'vitest';
import type { SuiteContext } from './context.js';
import { claimed, created, mustGet, OWNER, T0 } from './fixtures.js';

const ASK_NAME = { method: 'elicitation/create', params: { message: 'name?' } };
const ASK_AGE = { method: 'elicitation/create', params: { message: 'age?' } };

/** Durable input requests and responses (X-27..X-34, S9). */
export function inputCases({ store, test }: SuiteContext): void {
  test('input: requestInput adds an outstanding request and sets input_required', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const task = await store().requestInput(fence, 'name', ASK_NAME, T0 + 1);
    expect(task).toMatchObject({ status: 'input_required', inputRequests: { name: ASK_NAME }, updatedAt: T0 + 1 });
    expect(await mustGet(store(), fence.taskId, T0 + 1)).toEqual(task);
  });

  test('input: requesting the same key again is a no-op, outstanding or answered', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const first = await store().requestInput(fence, 'name', ASK_NAME, T0 + 1);
    const repeat = await store().requestInput(fence, 'name', ASK_AGE, T0 + 2);
    expect(repeat).toEqual(first);
    await store().respond(OWNER, fence.taskId, { name: 'Ada' }, T0 + 3);
    const answered = await mustGet(store(), fence.taskId, T0 + 3);
    const rerun = await store().requestInput(fence, 'name', ASK_NAME, T0 + 4);
    expect(rerun).toEqual(answered);
    expect(rerun).toMatchObject({ status: 'working', inputRequests: {}, inputResponses: { name: 'Ada' } });
  });

  test('input: respond records the response, removes the request and goes back to working', async () => {
    const { fence } = await claimed(store(), await created(store()));
    await store().requestInput(fence, 'name', ASK_NAME, T0 + 1);
    const task = await store().respond(
      OWNER,
      fence.taskId,
      { name: { action: 'accept', content: { n: 'Ada' } } },
      T0 + 2,
    );
    expect(task).toMatchObject({
      status: 'working',
      inputRequests: {},
      inputResponses: { name: { action: 'accept', content: { n: 'Ada' } } },
      updatedAt: T0 + 2,
    });
    expect(await mustGet(store(), fence.taskId, T0 + 2)).toEqual(task);
  });

  test('input: responses for unknown keys are ignored and change nothing', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const asked = await store().requestInput(fence, 'name', ASK_NAME, T0 + 1);
    const task = await store().respond(OWNER, fence.taskId, { bogus: 1 }, T0 + 2);
    expect(task).toEqual(asked);
    expect(await mustGet(store(), fence.taskId, T0 + 2)).toEqual(asked);
  });

  test('input: a partial response keeps input_required until every request is answered', async () => {
    const { fence } = await claimed(store(), await created(store()));
    await store().requestInput(fence, 'name', ASK_NAME, T0 + 1);
    await store().requestInput(fence, 'age', ASK_AGE, T0 + 2);
    const partial = await store().respond(OWNER, fence.taskId, { name: 'Ada', other: true }, T0 + 3);
    expect(partial).toMatchObject({ status: 'input_required', inputRequests: { age: ASK_AGE } });
    expect(partial.inputResponses).toEqual({ name: 'Ada' });
    const done = await store().respond(OWNER, fence.taskId, { age: 36 }, T0 + 4);
    expect(done).toMatchObject({ status: 'working', inputRequests: {}, inputResponses: { name: 'Ada', age: 36 } });
  });

  test('input: a cancel clears outstanding requests and later responses change nothing', async () => {
    const { fence } = await claimed(store(), await created(store()));
    await store().requestInput(fence, 'name', ASK_NAME, T0 + 1);
    const { task: cancelled } = await store().cancel(OWNER, fence.taskId, T0 + 2);
    expect(cancelled).toMatchObject({ status: 'cancelled', inputRequests: {} });
    expect(await store().respond(OWNER, fence.taskId, { name: 'Ada' }, T0 + 3)).toEqual(cancelled);
  });
}
