import { expect } from 'vitest';
import type { SuiteContext } from './context.js';
import { created, mustGet, newTask, OWNER, rejectsWith, STRANGER, T0 } from './fixtures.js';

/** S1 round trip, caller ids, copies, and S8 owner isolation. */
export function basicCases({ store, test }: SuiteContext): void {
  test('S1: create + get round trip returns the committed record', async () => {
    const input = newTask({ args: { q: 'x', nested: { a: [1, 2] } }, statusMessage: 'queued', ttlMs: 5_000 });
    const outcome = await store().create(input);
    expect(outcome.created).toBe(true);
    expect(outcome.task).toMatchObject({
      id: input.id,
      owner: OWNER,
      tool: input.tool,
      args: { q: 'x', nested: { a: [1, 2] } },
      requestDigest: input.requestDigest,
      submissionKey: null,
      wire: 'mcp-tasks-ext',
      status: 'working',
      statusMessage: 'queued',
      progress: null,
      createdAt: T0,
      updatedAt: T0,
      ttlMs: 5_000,
      pollIntervalMs: 1_000,
      keepAliveMs: null,
      terminalAt: null,
      leaseOwner: null,
      leaseExpiresAt: null,
      epoch: 0,
      cancelRequested: false,
      checkpoint: null,
      inputRequests: {},
      inputResponses: {},
      result: null,
      error: null,
      resultDigest: null,
      lateOutcome: null,
      eventSeq: 1,
    });
    expect(await store().get(OWNER, input.id, T0 + 1)).toEqual(outcome.task);
  });

  test('S1: ids from the caller are stored as given', async () => {
    const id = 'Zz-_09AbCdEfGhIjKlMnOpQr';
    const task = await created(store(), { id, wire: 'sep-1391', submissionKey: 'k-as-given' });
    expect(task.id).toBe(id);
    expect((await mustGet(store(), id)).id).toBe(id);
    expect((await mustGet(store(), id)).wire).toBe('sep-1391');
  });

  test('S1: records are copies: mutating an input or a returned record changes nothing stored', async () => {
    const input = newTask({ args: { list: [1] } });
    const { task } = await store().create(input);
    (input.args['list'] as number[]).push(2);
    (task.args['list'] as number[]).push(3);
    (task as { status: string }).status = 'completed';
    const again = await mustGet(store(), input.id);
    expect(again.args).toEqual({ list: [1] });
    expect(again.status).toBe('working');
  });

  test('S8: a foreign owner gets null from get, like an unknown id', async () => {
    const task = await created(store());
    expect(await store().get(STRANGER, task.id, T0)).toBeNull();
    expect(await store().get(OWNER, 'no-such-task', T0)).toBeNull();
    expect(await store().get(OWNER, task.id, T0)).not.toBeNull();
  });

  test('S8: a foreign cancel rejects not_found and the task keeps working', async () => {
    const task = await created(store());
    await rejectsWith(store().cancel(STRANGER, task.id, T0 + 1), 'not_found');
    await rejectsWith(store().cancel(OWNER, 'no-such-task', T0 + 1), 'not_found');
    expect(await mustGet(store(), task.id)).toEqual(task);
  });

  test('S8: a foreign respond rejects not_found and records nothing', async () => {
    const task = await created(store());
    await rejectsWith(store().respond(STRANGER, task.id, { q: 1 }, T0 + 1), 'not_found');
    await rejectsWith(store().respond(OWNER, 'no-such-task', { q: 1 }, T0 + 1), 'not_found');
    expect(await mustGet(store(), task.id)).toEqual(task);
  });

  test('S8: list shows only the caller’s own tasks', async () => {
    const mine = await created(store());
    const theirs = await created(store(), { owner: STRANGER });
    const page = await store().list(OWNER, { limit: 100 }, T0);
    expect(page.tasks.map((t) => t.id)).toEqual([mine.id]);
    const other = await store().list(STRANGER, { limit: 100 }, T0);
    expect(other.tasks.map((t) => t.id)).toEqual([theirs.id]);
    expect((await store().list('nobody', { limit: 100 }, T0)).tasks).toEqual([]);
  });
}
