import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LIST_PAGE_SIZE } from '../../src/server/wire/rev2025-11-25/constants.js';
import { ALICE, BOB, LegacySession, eventually, startWireServer, type WireServer } from './helpers.js';

/** The 2025-11-25 wire over raw JSON-RPC on fetch (sessionful and stateless legacy legs). */
let server: WireServer;

beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server.close();
});

describe('2025-11-25 tasks over raw JSON-RPC', () => {
  test('T-93 T-01: tools/list shows execution.taskSupport for every tool; capabilities advertise tasks', async () => {
    const session = await LegacySession.open(server.url, ALICE);
    expect(session.initializeResult.capabilities.tasks).toEqual({
      cancel: {},
      list: {},
      requests: { tools: { call: {} } },
    });
    const { result } = await session.request('tools/list');
    const modes = Object.fromEntries(
      result.tools.map((t: { name: string; execution: unknown }) => [t.name, t.execution]),
    );
    expect(modes).toEqual({
      work: { taskSupport: 'optional' },
      needs_task: { taskSupport: 'required' },
      inline_only: { taskSupport: 'forbidden' },
    });
    expect(result.tools.every((t: object) => !('invocationMode' in t))).toBe(true);
  });

  test('T-13: a plain call of a required tool is -32601; T-10: a task-augmented call of a forbidden tool is -32601', async () => {
    const session = await LegacySession.open(server.url, ALICE);
    const plain = await session.request('tools/call', { name: 'needs_task', arguments: {} });
    expect(plain.error?.code).toBe(-32601);
    expect(plain.error?.data?.reason).toBe('task_required');
    const augmented = await session.request('tools/call', { name: 'inline_only', arguments: {}, task: {} });
    expect(augmented.error?.code).toBe(-32601);
    expect(augmented.error?.data?.reason).toBe('task_forbidden');
    // T-11: an optional tool works both ways.
    const inline = await session.request('tools/call', { name: 'work', arguments: { text: 'now' } });
    expect(inline.result).toMatchObject({ content: [{ type: 'text', text: 'done now' }] });
    expect(inline.result.task).toBeUndefined();
  });

  test('T-14 T-34 T-35: params.task.ttl is honoured in ms (null = unlimited) and reported on every Task', async () => {
    const session = await LegacySession.open(server.url, ALICE);
    const short = await session.request('tools/call', { name: 'work', arguments: {}, task: { ttl: 120_000 } });
    expect(short.result.task).toMatchObject({ status: 'working', ttl: 120_000 });
    const unlimited = await session.request('tools/call', { name: 'work', arguments: {}, task: { ttl: null } });
    expect(unlimited.result.task.ttl).toBeNull();
    const bad = await session.request('tools/call', { name: 'work', arguments: {}, task: { ttl: -5 } });
    expect(bad.error?.code).toBe(-32602);
    const got = await session.request('tasks/get', { taskId: short.result.task.taskId });
    expect(got.result.ttl).toBe(120_000);
    expect(got.result._meta?.['io.modelcontextprotocol/related-task']).toBeUndefined(); // T-46
  });

  test('T-68 T-44: unknown, malformed and meta-only task ids are -32602 on get, result and cancel', async () => {
    const session = await LegacySession.open(server.url, ALICE);
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const unknown = await session.request(method, { taskId: 'no-such-task' });
      expect(unknown.error?.code, method).toBe(-32602);
      const missing = await session.request(method, {
        _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'x' } },
      });
      expect(missing.error?.code, method).toBe(-32602);
    }
  });

  test('T-39: tasks/result holds the answer until the task ends; a cancelled task ends it with an error', async () => {
    const session = await LegacySession.open(server.url, ALICE);
    const created = await session.request('tools/call', {
      name: 'work',
      arguments: { mode: 'block', key: 'r1' },
      task: {},
    });
    const taskId = created.result.task.taskId as string;
    let settled = false;
    const pending = session.request('tasks/result', { taskId }).finally(() => (settled = true));
    await eventually(
      () => session.request('tasks/get', { taskId }),
      (r) => r.result?.status === 'working',
    );
    expect(settled).toBe(false);
    server.gates.release('r1');
    const answer = await pending;
    expect(answer.result.content).toEqual([{ type: 'text', text: 'done' }]);

    const blocked = await session.request('tools/call', {
      name: 'work',
      arguments: { mode: 'block', key: 'r2' },
      task: {},
    });
    const blockedId = blocked.result.task.taskId as string;
    const waiting = session.request('tasks/result', { taskId: blockedId });
    const cancel = await session.request('tasks/cancel', { taskId: blockedId });
    expect(cancel.result.status).toBe('cancelled');
    const ended = await waiting;
    expect(ended.error?.code).toBe(-32602);
    expect(ended.error?.data?.reason).toBe('task_cancelled');
  });

  test('T-56 T-57 T-58 T-60: tasks/list pages with an opaque nextCursor; a bad cursor is -32602', async () => {
    const session = await LegacySession.open(server.url, BOB);
    const created: string[] = [];
    for (let i = 0; i < LIST_PAGE_SIZE + 3; i++) {
      const r = await session.request('tools/call', { name: 'work', arguments: { text: `${i}` }, task: {} });
      created.push(r.result.task.taskId as string);
    }
    const first = await session.request('tasks/list', {});
    expect(first.result.tasks).toHaveLength(LIST_PAGE_SIZE);
    expect(typeof first.result.nextCursor).toBe('string');
    const second = await session.request('tasks/list', { cursor: first.result.nextCursor });
    const listed = [...first.result.tasks, ...second.result.tasks].map((t: { taskId: string }) => t.taskId);
    expect(new Set(listed)).toEqual(new Set(created));
    expect(second.result.nextCursor).toBeUndefined();
    const bad = await session.request('tasks/list', { cursor: '!!not-a-cursor!!' });
    expect(bad.error?.code).toBe(-32602);
    expect(bad.error?.data?.reason).toBe('invalid_cursor');
  });

  test('T-77: an unauthenticated caller is not offered tasks/list (neither capability nor method)', async () => {
    const session = await LegacySession.open(server.url, undefined);
    expect(session.initializeResult.capabilities.tasks.list).toBeUndefined();
    const list = await session.request('tasks/list', {});
    expect(list.error?.code).toBe(-32601);
    // T-75 T-76: still usable by id (the unguessable id is the capability).
    const created = await session.request('tools/call', { name: 'work', arguments: {}, task: {} });
    expect((await session.request('tasks/get', { taskId: created.result.task.taskId })).result.taskId).toBe(
      created.result.task.taskId,
    );
  });

  test('T-29: a session is bound to its principal; another principal naming it gets 404', async () => {
    const session = await LegacySession.open(server.url, ALICE);
    const response = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': session.sessionId ?? '',
        authorization: `Bearer ${BOB}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(response.status).toBe(404);
    await response.text();
  });

  test('stateless 2025 requests (no initialize, no session) are still served by the SDK leg', async () => {
    const session = await LegacySession.open(server.url, ALICE);
    const created = await session.request('tools/call', { name: 'work', arguments: {}, task: {} });
    const stateless = new LegacySession(server.url, ALICE);
    const got = await stateless.request('tasks/get', { taskId: created.result.task.taskId });
    expect(got.result?.taskId).toBe(created.result.task.taskId);
  });
});

describe('sessionful leg housekeeping', () => {
  test('T-29: an idle session is closed and then answers 404; the client can re-initialize', async () => {
    const idle = await startWireServer({ sessionIdleMs: 150 });
    try {
      const session = await LegacySession.open(idle.url, ALICE);
      await new Promise((r) => setTimeout(r, 400)); // well past the idle time and the 37 ms sweep
      const gone = await session.request('tools/list');
      expect(gone.status).toBe(404);
      expect(gone.error?.message).toBe('Session not found');
      const again = await LegacySession.open(idle.url, ALICE);
      expect((await again.request('tools/list')).status).toBe(200);
    } finally {
      await idle.close();
    }
  });
});
