import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SEP1391_CAPABILITY } from '../../src/server/wire/sep-1391/index.js';
import { ALICE, BOB, LegacySession, eventually, startWireServer, type Json, type WireServer } from './helpers.js';

/** SEP-1391 (`tools/async/*`) over raw JSON-RPC on 2025-era sessions. */
let server: WireServer;
const ASYNC = { experimental: { [SEP1391_CAPABILITY]: {} } };

beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server.close();
});

const modes = (tools: Json[]) => Object.fromEntries(tools.map((t) => [t.name, t.invocationMode]));

describe('SEP-1391 async tools', () => {
  test('L-01 L-05 L-06: an async-capable client sees one invocationMode per tool', async () => {
    const session = await LegacySession.open(server.url, ALICE, ASYNC);
    const { result } = await session.request('tools/list');
    expect(modes(result.tools)).toEqual({ work: 'async', needs_task: 'async', inline_only: 'sync' });
  });

  test('L-02 L-04 L-07: an older protocol version sees neither async-only tools nor the field', async () => {
    const session = await LegacySession.open(server.url, ALICE, {}, '2025-06-18');
    const { result } = await session.request('tools/list');
    expect(result.tools.map((t: Json) => t.name)).toEqual(['work', 'inline_only']);
    expect(result.tools.every((t: object) => !('invocationMode' in t) && !('execution' in t))).toBe(true);
    const hybrid = await session.request('tools/call', { name: 'work', arguments: { text: 'old' } });
    expect(hybrid.result.content).toEqual([{ type: 'text', text: 'done old' }]);
  });

  test('L-08 L-09 L-10 L-11 L-18 L-21: async call with a client token, keepAlive seconds, status then result', async () => {
    const session = await LegacySession.open(server.url, ALICE, ASYNC);
    const token = 'op-token-1';
    const call = await session.request('tools/call', {
      name: 'work',
      arguments: { mode: 'block', key: 'sep-1' },
      operation: { token, keepAlive: 90 },
    });
    expect(call.result).toEqual({ content: [], operation: { token, keepAlive: 90, pollFrequency: 0.1 } });
    const early = await session.request('tools/async/status', { token });
    expect(['submitted', 'working']).toContain(early.result.status);
    const notYet = await session.request('tools/async/result', { token });
    expect(notYet.error?.code).toBe(-32600); // L-16
    server.gates.release('sep-1');
    await eventually(
      () => session.request('tools/async/status', { token }),
      (r) => r.result?.status === 'completed',
    );
    const result = await session.request('tools/async/result', { token });
    expect(result.result).toEqual({
      result: { content: [{ type: 'text', text: 'done' }], structuredContent: { ok: true } },
    });
    const task = await server.engine.lookupKey('auth:alice', token);
    expect(task.kind === 'found' && task.task.keepAliveMs).toBe(90_000);
  });

  test('the token is the idempotency key: same call returns the same operation, a different call is -32602', async () => {
    const session = await LegacySession.open(server.url, ALICE, ASYNC);
    const params = { name: 'work', arguments: { text: 'idem' }, operation: { token: 'op-idem' } };
    const first = await session.request('tools/call', params);
    const again = await session.request('tools/call', params);
    expect(again.result.operation.token).toBe('op-idem');
    const page = await server.engine.list('auth:alice', { limit: 1000, wire: 'sep-1391' });
    expect(page.tasks.filter((t) => t.submissionKey === 'op-idem')).toHaveLength(1);
    expect(first.result.operation.token).toBe('op-idem');
    const other = await session.request('tools/call', { ...params, arguments: { text: 'different' } });
    expect(other.error?.code).toBe(-32602);
    expect(other.error?.data?.reason).toBe('token_conflict');
  });

  test('L-11: a failed operation reports its error string; L-16: its result is -32600', async () => {
    const session = await LegacySession.open(server.url, ALICE, ASYNC);
    await session.request('tools/call', {
      name: 'work',
      arguments: { mode: 'rpc_error' },
      operation: { token: 'op-fail' },
    });
    const status = await eventually(
      () => session.request('tools/async/status', { token: 'op-fail' }),
      (r) => r.result?.status === 'failed',
    );
    // L-11, plus where the operation's ordered events stand (ours, issue 32): working, failed.
    expect(status.result).toEqual({
      status: 'failed',
      error: 'backend refused',
      _meta: { 'mcp-terminus.dev/events': { lastSeq: 2, cursor: expect.stringMatching(/^2\./) } },
    });
    const result = await session.request('tools/async/result', { token: 'op-fail' });
    expect(result.error?.code).toBe(-32600);
    expect(result.error?.data?.status).toBe('failed');
  });

  test('L-13 L-15 L-19: unknown and foreign tokens are -32602; a cancelled operation is -32602 and stays so', async () => {
    const alice = await LegacySession.open(server.url, ALICE, ASYNC);
    const bob = await LegacySession.open(server.url, BOB, ASYNC);
    expect((await alice.request('tools/async/status', { token: 'never-used' })).error?.code).toBe(-32602);
    await alice.request('tools/call', {
      name: 'work',
      arguments: { mode: 'block', key: 'sep-c' },
      operation: { token: 'op-c' },
    });
    expect((await bob.request('tools/async/status', { token: 'op-c' })).error?.code).toBe(-32602);
    const cancelled = await alice.request('tools/async/cancel', { token: 'op-c' });
    expect(cancelled.result).toEqual({ status: 'canceled' });
    server.gates.release('sep-c');
    for (const method of ['tools/async/status', 'tools/async/result']) {
      const answer = await alice.request(method, { token: 'op-c' });
      expect(answer.error?.code, method).toBe(-32602);
      expect(answer.error?.data?.status, method).toBe('canceled');
    }
  });

  test('S6: polling a token before its call burns it, so the late call is refused', async () => {
    const session = await LegacySession.open(server.url, ALICE, ASYNC);
    expect((await session.request('tools/async/status', { token: 'op-late' })).error?.code).toBe(-32602);
    const late = await session.request('tools/call', { name: 'work', arguments: {}, operation: { token: 'op-late' } });
    expect(late.error?.code).toBe(-32602);
    expect(late.error?.data?.reason).toBe('token_never_created');
  });

  test('L-12 L-20: queued input requests are sent while the client polls status, tagged with _operation', async () => {
    const session = await LegacySession.open(server.url, ALICE, { ...ASYNC, elicitation: {} });
    await session.request('tools/call', { name: 'work', arguments: { mode: 'ask' }, operation: { token: 'op-ask' } });
    const status = await eventually(
      () => session.requestWithServerRequests('tools/async/status', { token: 'op-ask' }),
      (r) => r.serverRequests.length > 0,
    );
    expect(status.reply.result.status).toBe('input_required');
    const asked = status.serverRequests[0];
    expect(asked.method).toBe('elicitation/create');
    expect(asked.params._operation).toEqual({ token: 'op-ask' });
    await session.respond(asked.id, { action: 'accept', content: { name: 'Lin' } });
    await eventually(
      () => session.request('tools/async/status', { token: 'op-ask' }),
      (r) => r.result?.status === 'completed',
    );
    const result = await session.request('tools/async/result', { token: 'op-ask' });
    expect(result.result.result.content).toEqual([{ type: 'text', text: 'hello Lin' }]);
  });

  test('a sync tool called with operation is -32602 and runs nothing', async () => {
    const session = await LegacySession.open(server.url, ALICE, ASYNC);
    const answer = await session.request('tools/call', { name: 'inline_only', arguments: {}, operation: {} });
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.data?.reason).toBe('sync_tool');
  });

  test('L-22: notifications/cancelled naming the original tools/call id cancels the operation', async () => {
    const session = await LegacySession.open(server.url, ALICE, ASYNC);
    const call = await session.request('tools/call', {
      name: 'work',
      arguments: { mode: 'block', key: 'sep-n' },
      operation: { token: 'op-notified' },
    });
    expect(call.result.operation.token).toBe('op-notified');
    await session.notify('notifications/cancelled', { requestId: session.lastRequestId, reason: 'user' });
    const status = await eventually(
      () => session.request('tools/async/status', { token: 'op-notified' }),
      (r) => r.error !== undefined,
    );
    expect(status.error?.data?.status).toBe('canceled');
    server.gates.release('sep-n');
  });

  test('T-61: notifications/cancelled never cancels a 2025-11-25 task', async () => {
    const session = await LegacySession.open(server.url, ALICE, ASYNC);
    const created = await session.request('tools/call', {
      name: 'work',
      arguments: { mode: 'block', key: 'sep-t61' },
      task: {},
    });
    await session.notify('notifications/cancelled', { requestId: session.lastRequestId });
    // A marker task created after the notification and completed proves the notification was processed.
    const marker = await session.request('tools/call', { name: 'work', arguments: {}, task: {} });
    await eventually(
      () => session.request('tasks/get', { taskId: marker.result.task.taskId }),
      (r) => r.result?.status === 'completed',
    );
    expect((await session.request('tasks/get', { taskId: created.result.task.taskId })).result.status).toBe('working');
    server.gates.release('sep-t61');
  });
});
