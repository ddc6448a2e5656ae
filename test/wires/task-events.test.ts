import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { encodeEventCursor } from '../../src/core/event-cursor.js';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { EVENTS_META, EVENTS_METHOD } from '../../src/server/task-events.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { createTask, rpc } from '../server/helpers.js';
import { ALICE, BOB, Gates, LegacySession, aip, authenticate, eventually } from './helpers.js';

/**
 * Issue 32: `terminus/tasks/events` on the Tasks-extension and 2025-11-25 wires and
 * `GET /v1/operations/{id}/events` on AIP-151, over real HTTP with two bearer-token principals:
 * each event once, in seq order, from any cursor; the last seq in `_meta` of `tasks/get`; and
 * every bad cursor a clear error that reads nothing.
 */
const gates = new Gates();
const stepper = defineTaskTool({
  name: 'stepper',
  description: 'reports progress, logs a line, waits for its gate, then returns',
  inputSchema: z.object({ key: z.string() }),
  pollIntervalMs: 50,
  handler: async ({ key }, ctx) => {
    await ctx.progress(1, 2, 'first half');
    await ctx.log('halfway');
    await gates.wait(key, ctx.signal);
    await ctx.progress(2, 2, 'second half');
    return { content: [{ type: 'text', text: 'ok' }] };
  },
});

const store = createMemoryTaskStore();
const engine = createEngine({ store, tools: [stepper], clock: systemClock, ids: systemIds, claimIntervalMs: 20 });
let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  engine.start();
  const registry = createWireRegistry({ disabled: [] });
  server = await createTerminusServer({ engine, wires: registry.adapters }).serveHttp({ port: 0, authenticate });
});
afterAll(async () => {
  await server.close();
  await engine.stop();
  await store.close();
});

const events = (params: Record<string, unknown>, token = ALICE, declare = true) =>
  rpc(server.url, EVENTS_METHOD, params, { token, declare });

/** A task that has written its first three events (working, progress, log) and waits at its gate. */
async function started(key: string): Promise<string> {
  const taskId = await createTask(server.url, 'stepper', { key }, { token: ALICE });
  await eventually(
    () => events({ taskId }),
    (a) => a.result?.lastSeq === 3,
  );
  return taskId;
}

describe('terminus/tasks/events on the Tasks extension', () => {
  test('each event once, in order, from any cursor; tasks/get carries the last seq and its cursor', async () => {
    const taskId = await started('ext-1');
    const first = await events({ taskId, limit: 2 });
    expect(first.result).toMatchObject({ taskId, lastSeq: 3, status: 'working', done: false });
    expect(first.result.events).toEqual([
      { seq: 1, at: expect.stringMatching(/^\d{4}-/), kind: 'status', status: 'working', statusMessage: null },
      { seq: 2, at: expect.any(String), kind: 'progress', progress: { done: 1, total: 2, message: 'first half' } },
    ]);
    const got = await rpc(server.url, 'tasks/get', { taskId }, { token: ALICE, declare: true });
    expect(got.result._meta[EVENTS_META]).toEqual({ lastSeq: 3, cursor: encodeEventCursor(taskId, 3) });
    gates.release('ext-1');
    // A client whose stream broke after seq 2 reads on from its cursor: seq 3 onwards, once each.
    const rest = await eventually(
      () => events({ taskId, cursor: first.result.cursor }),
      (a) => a.result?.done === true,
    );
    expect(rest.result.events.map((e: { seq: number; kind: string }) => [e.seq, e.kind])).toEqual([
      [3, 'log'],
      [4, 'progress'],
      [5, 'status'],
    ]);
    expect(rest.result.events[0].line).toMatchObject({ seq: 1, stream: 'log', text: 'halfway' });
    expect(rest.result.events[2]).toMatchObject({ status: 'completed' });
    const after = await events({ taskId, cursor: rest.result.cursor });
    expect(after.result).toMatchObject({ events: [], lastSeq: 5, done: true, cursor: rest.result.cursor });
  });

  test('S8 X-44: a foreign id answers exactly like an unknown one; X-47: no declaration is -32021 first', async () => {
    const taskId = await started('ext-2');
    const foreign = await events({ taskId }, BOB);
    const unknown = await events({ taskId: 'no-such-task-0000000000' }, BOB);
    expect(foreign.error?.code).toBe(-32602);
    expect({ status: foreign.status, error: foreign.error }).toEqual({ status: unknown.status, error: unknown.error });
    // A foreign task with a cursor of its own is still just "not found": the cursor is never looked at.
    const withCursor = await events({ taskId, cursor: encodeEventCursor(taskId, 1) }, BOB);
    expect(withCursor.error).toEqual(unknown.error);
    expect((await events({ taskId }, ALICE, false)).error?.code).toBe(-32021);
    gates.release('ext-2');
  });

  test('bad cursors and limits are -32602 naming the parameter, and read nothing', async () => {
    const taskId = await started('ext-3');
    const other = await started('ext-4');
    for (const [params, text] of [
      [{ cursor: 'garbage' }, 'cursor "garbage" is malformed'],
      [{ cursor: 3 }, 'cursor must be a string'],
      [{ cursor: '' }, 'is malformed'],
      [{ cursor: encodeEventCursor(other, 1) }, 'cursor belongs to another task'],
      [
        { cursor: encodeEventCursor(taskId, 99) },
        'cursor is ahead of the task: it stands after event 99, the last is 3',
      ],
      [{ limit: 0 }, 'limit must be an integer from 1 to 1000'],
      [{ limit: 1001 }, 'limit must be'],
      [{ limit: '5' }, 'limit must be'],
    ] as const) {
      const answer = await events({ taskId, ...params });
      expect(answer.error?.code, JSON.stringify(params)).toBe(-32602);
      expect(answer.error?.message, JSON.stringify(params)).toContain(text);
      expect(answer.result).toBeUndefined();
    }
    // Nothing was written by the refusals: the sequence is as it was.
    expect((await events({ taskId })).result.lastSeq).toBe(3);
    gates.release('ext-3');
    gates.release('ext-4');
  });
});

describe('terminus/tasks/events on the 2025-11-25 wire', () => {
  test('the same result; tasks/get carries the last seq; T-73: a foreign id answers like an unknown one', async () => {
    const session = await LegacySession.open(server.url, ALICE);
    const created = await session.request('tools/call', { name: 'stepper', arguments: { key: 'rev-1' }, task: {} });
    const taskId = created.result.task.taskId as string;
    const page = await eventually(
      () => session.request(EVENTS_METHOD, { taskId }),
      (a) => a.result?.lastSeq === 3,
    );
    expect(page.result.events.map((e: { kind: string }) => e.kind)).toEqual(['status', 'progress', 'log']);
    const got = await session.request('tasks/get', { taskId });
    expect(got.result._meta[EVENTS_META]).toEqual({ lastSeq: 3, cursor: encodeEventCursor(taskId, 3) });
    const bob = await LegacySession.open(server.url, BOB);
    const foreign = await bob.request(EVENTS_METHOD, { taskId });
    const unknown = await bob.request(EVENTS_METHOD, { taskId: 'no-such-task-0000000000' });
    expect(foreign.error?.code).toBe(-32602);
    expect({ status: foreign.status, error: foreign.error }).toEqual({ status: unknown.status, error: unknown.error });
    const bad = await session.request(EVENTS_METHOD, { taskId, cursor: 'nope' });
    expect(bad.error?.code).toBe(-32602);
    expect(bad.error?.message).toContain('is malformed');
    gates.release('rev-1');
  });
});

describe('GET /v1/operations/{id}/events on AIP-151', () => {
  test('the same JSON; the operation metadata names the cursor; foreign is 404 like unknown; bad query is 400', async () => {
    const taskId = await started('aip-1');
    const base = server.url.replace(/\/mcp$/, '');
    const page = await aip(
      base,
      'GET',
      `/v1/operations/${taskId}/events?cursor=${encodeEventCursor(taskId, 1)}`,
      ALICE,
    );
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ taskId, lastSeq: 3, status: 'working', done: false });
    expect(page.body.events.map((e: { seq: number }) => e.seq)).toEqual([2, 3]);
    const operation = await aip(base, 'GET', `/v1/operations/${taskId}`, ALICE);
    expect(operation.body.metadata.events).toEqual({ lastSeq: 3, cursor: encodeEventCursor(taskId, 3) });
    const foreign = await aip(base, 'GET', `/v1/operations/${taskId}/events`, BOB);
    const unknown = await aip(base, 'GET', `/v1/operations/no-such-task-0000000000/events`, BOB);
    expect(foreign.status).toBe(404);
    expect(foreign).toEqual(unknown);
    for (const query of ['cursor=x', `cursor=${encodeEventCursor('other', 0)}`, 'cursor=9.AAAAAAAAAA', 'limit=0']) {
      const bad = await aip(base, 'GET', `/v1/operations/${taskId}/events?${query}`, ALICE);
      expect(bad.status, query).toBe(400);
      expect(JSON.stringify(bad.body)).toMatch(/cursor|limit/);
    }
    gates.release('aip-1');
  });
});

describe('bad input on every wire’s events read: a short clear error, nothing read, the server up', () => {
  test('huge and nested cursors, wrong types, a seq in the future, a cursor of another task', async () => {
    const taskId = await started('bad-1');
    const other = await started('bad-2');
    const huge = { nested: { deeper: ['x'.repeat(200_000)] } };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ cursor: huge }, /cursor must be a string.*got \{"nested".{0,60}$/s],
      [{ cursor: 'y'.repeat(200_000) }, /cursor "y{40}" is malformed/],
      [{ cursor: ['a', 'b'] }, /cursor must be a string/],
      [{ cursor: encodeEventCursor(taskId, 1e14) }, /cursor is ahead of the task/],
      [{ cursor: encodeEventCursor(other, 2) }, /cursor belongs to another task/],
      [{ limit: huge }, /limit must be an integer from 1 to 1000, got .{0,60}$/s],
      [{ limit: 1e300 }, /limit must be an integer from 1 to 1000/],
    ];
    const session = await LegacySession.open(server.url, ALICE);
    const base = server.url.replace(/\/mcp$/, '');
    for (const [params, message] of cases) {
      for (const answer of [
        await events({ taskId, ...params }),
        await session.request(EVENTS_METHOD, { taskId, ...params }),
      ]) {
        expect(answer.error?.code, JSON.stringify(params).slice(0, 60)).toBe(-32602);
        expect(answer.error?.message).toMatch(message);
        expect(answer.error?.message.length).toBeLessThan(600);
      }
    }
    for (const query of [`cursor=${'z'.repeat(5_000)}`, `cursor=${encodeEventCursor(taskId, 1e14)}`, 'limit=1e3']) {
      const bad = await aip(base, 'GET', `/v1/operations/${taskId}/events?${query}`, ALICE);
      expect(bad.status, query.slice(0, 40)).toBe(400);
      expect(JSON.stringify(bad.body).length).toBeLessThan(1_000);
    }
    // Nothing was written and the server still answers.
    expect((await events({ taskId })).result.lastSeq).toBe(3);
    await session.close();
    gates.release('bad-1');
    gates.release('bad-2');
  });
});
