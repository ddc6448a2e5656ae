import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { defineTaskTool } from '../../src/runner/tool.js';
import { LOGS_METHOD } from '../../src/server/task-logs.js';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { SEP1391_CAPABILITY } from '../../src/server/wire/sep-1391/index.js';
import { createTask, rpc } from '../server/helpers.js';
import { ALICE, BOB, Gates, LegacySession, aip, authenticate, eventually } from './helpers.js';

/**
 * Issue 18: `terminus/tasks/logs` on the Tasks-extension and 2025-11-25 wires and
 * `GET /v1/operations/{id}/logs` on AIP-151, over real HTTP with two bearer-token principals.
 */
const gates = new Gates();
const chatty = defineTaskTool({
  name: 'chatty',
  description: 'logs `lines` lines, waits for its gate, logs one more and returns',
  inputSchema: z.object({ lines: z.number().int(), key: z.string() }),
  pollIntervalMs: 50,
  handler: async ({ lines, key }, ctx) => {
    for (let i = 1; i <= lines; i++) await ctx.log(`line ${i}`, { i });
    await ctx.output('partial result');
    await gates.wait(key, ctx.signal);
    await ctx.log('finished');
    return { content: [{ type: 'text', text: 'ok' }] };
  },
});

const store = createMemoryTaskStore();
const engine = createEngine({ store, tools: [chatty], clock: systemClock, ids: systemIds, claimIntervalMs: 20 });
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

const logs = (params: Record<string, unknown>, token = ALICE, declare = true) =>
  rpc(server.url, LOGS_METHOD, params, { token, declare });

async function started(key: string, lines = 3): Promise<string> {
  const taskId = await createTask(server.url, 'chatty', { lines, key }, { token: ALICE });
  await eventually(
    () => logs({ taskId }),
    (a) => a.result?.lines?.length === lines + 1,
  );
  return taskId;
}

describe('terminus/tasks/logs on the Tasks extension', () => {
  test('lines while the task runs, by cursor; done once terminal and read to the end', async () => {
    const taskId = await started('ext-1');
    const first = await logs({ taskId, limit: 2 });
    expect(first.result).toMatchObject({ taskId, next: 2, dropped: 0, status: 'working', done: false });
    expect(first.result.lines).toEqual([
      {
        seq: 1,
        epoch: 1,
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        stream: 'log',
        text: 'line 1',
        fields: { i: 1 },
      },
      { seq: 2, epoch: 1, at: expect.any(String), stream: 'log', text: 'line 2', fields: { i: 2 } },
    ]);
    const rest = await logs({ taskId, after: first.result.next });
    expect(rest.result.lines.map((l: { seq: number; stream: string }) => [l.seq, l.stream])).toEqual([
      [3, 'log'],
      [4, 'output'],
    ]);
    expect(rest.result).toMatchObject({ next: 4, done: false });
    gates.release('ext-1');
    const end = await eventually(
      () => logs({ taskId, after: 4 }),
      (a) => a.result?.done === true,
    );
    expect(end.result).toMatchObject({ status: 'completed', next: 5, done: true });
    expect(end.result.lines.map((l: { text: string }) => l.text)).toEqual(['finished']);
  });

  test('S8 X-44: a foreign id answers exactly like an unknown one; X-47: no declaration is -32021 first', async () => {
    const taskId = await started('ext-2');
    const foreign = await logs({ taskId }, BOB);
    const unknown = await logs({ taskId: 'no-such-task-0000000000' }, BOB);
    expect(foreign.error?.code).toBe(-32602);
    expect({ status: foreign.status, error: foreign.error }).toEqual({ status: unknown.status, error: unknown.error });
    const undeclared = await logs({ taskId }, ALICE, false);
    expect(undeclared.error?.code).toBe(-32021);
    gates.release('ext-2');
  });

  test('bad after / limit are -32602 naming the parameter', async () => {
    const taskId = await started('ext-3');
    for (const [params, name] of [
      [{ after: -1 }, 'after'],
      [{ after: 1.5 }, 'after'],
      [{ after: '3' }, 'after'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 1001 }, 'limit'],
      [{ limit: 2.5 }, 'limit'],
    ] as const) {
      const answer = await logs({ taskId, ...params });
      expect(answer.error?.code, JSON.stringify(params)).toBe(-32602);
      expect(answer.error?.message).toContain(`${name} must be`);
    }
    expect((await logs({ taskId, limit: 1000 })).result.lines).toHaveLength(4);
    gates.release('ext-3');
  });
});

describe('terminus/tasks/logs on the 2025-11-25 wire', () => {
  test('the same result; T-73: a foreign id answers like an unknown one; bad limit is -32602', async () => {
    const session = await LegacySession.open(server.url, ALICE);
    const created = await session.request('tools/call', {
      name: 'chatty',
      arguments: { lines: 2, key: 'rev-1' },
      task: {},
    });
    const taskId = created.result.task.taskId as string;
    const page = await eventually(
      () => session.request(LOGS_METHOD, { taskId }),
      (a) => a.result?.lines?.length === 3,
    );
    expect(page.result).toMatchObject({ taskId, next: 3, dropped: 0, status: 'working', done: false });
    expect(page.result.lines.map((l: { text: string }) => l.text)).toEqual(['line 1', 'line 2', 'partial result']);
    const bob = await LegacySession.open(server.url, BOB);
    const foreign = await bob.request(LOGS_METHOD, { taskId });
    const unknown = await bob.request(LOGS_METHOD, { taskId: 'no-such-task-0000000000' });
    expect(foreign.error?.code).toBe(-32602);
    expect({ status: foreign.status, error: foreign.error }).toEqual({ status: unknown.status, error: unknown.error });
    const bad = await session.request(LOGS_METHOD, { taskId, limit: 0 });
    expect(bad.error?.code).toBe(-32602);
    expect(bad.error?.message).toContain('limit must be an integer from 1 to 1000');
    gates.release('rev-1');
    await eventually(
      () => session.request(LOGS_METHOD, { taskId, after: 3 }),
      (a) => a.result?.done === true,
    );
  });
});

describe('GET /v1/operations/{id}/logs on AIP-151', () => {
  test('the same JSON; foreign is 404 like unknown; bad query is 400', async () => {
    const taskId = await started('aip-1', 2);
    const base = server.url.replace(/\/mcp$/, '');
    const page = await aip(base, 'GET', `/v1/operations/${taskId}/logs?after=1&limit=5`, ALICE);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ taskId, next: 3, dropped: 0, status: 'working', done: false });
    expect(page.body.lines.map((l: { seq: number }) => l.seq)).toEqual([2, 3]);
    const foreign = await aip(base, 'GET', `/v1/operations/${taskId}/logs`, BOB);
    const unknown = await aip(base, 'GET', `/v1/operations/no-such-task-0000000000/logs`, BOB);
    expect(foreign.status).toBe(404);
    expect(foreign).toEqual(unknown);
    for (const query of ['after=-1', 'after=x', 'limit=0', 'limit=1001', 'limit=1.5']) {
      const bad = await aip(base, 'GET', `/v1/operations/${taskId}/logs?${query}`, ALICE);
      expect(bad.status, query).toBe(400);
      expect(JSON.stringify(bad.body)).toMatch(/(after|limit) must be/);
    }
    gates.release('aip-1');
  });
});

describe('tools/async/logs on SEP-1391', () => {
  test('by the client token; a foreign token answers like an unknown one; bad after is -32602', async () => {
    const ASYNC = { experimental: { [SEP1391_CAPABILITY]: {} } };
    const session = await LegacySession.open(server.url, ALICE, ASYNC);
    const token = 'sep-logs-token-0001';
    const call = await session.request('tools/call', {
      name: 'chatty',
      arguments: { lines: 2, key: 'sep-1' },
      operation: { token },
    });
    expect(call.result.operation.token).toBe(token);
    const page = await eventually(
      () => session.request('tools/async/logs', { token }),
      (a) => a.result?.lines?.length === 3,
    );
    expect(page.result).toMatchObject({ token, next: 3, dropped: 0, status: 'working', done: false });
    expect(page.result.lines.map((l: { text: string }) => l.text)).toEqual(['line 1', 'line 2', 'partial result']);
    const bob = await LegacySession.open(server.url, BOB, ASYNC);
    const foreign = await bob.request('tools/async/logs', { token });
    const unknown = await bob.request('tools/async/logs', { token: 'sep-logs-token-9999' });
    expect(foreign.error).toBeDefined();
    expect({ status: foreign.status, error: foreign.error }).toEqual({ status: unknown.status, error: unknown.error });
    const bad = await session.request('tools/async/logs', { token, after: -1 });
    expect(bad.error?.code).toBe(-32602);
    expect(bad.error?.message).toContain('after must be');
    gates.release('sep-1');
    await eventually(
      () => session.request('tools/async/logs', { token, after: 3 }),
      (a) => a.result?.done === true,
    );
  });
});

describe('task-log reads are rate-limited as polls (T-78)', () => {
  test('over pollsPerMinute, terminus/tasks/logs and the AIP logs route answer the limit', async () => {
    const limited = createEngine({
      store: createMemoryTaskStore(),
      tools: [chatty],
      clock: systemClock,
      ids: systemIds,
    });
    limited.start();
    const registry = createWireRegistry({ disabled: [], limits: { pollsPerMinute: 2 } });
    const http = await createTerminusServer({ engine: limited, wires: registry.adapters }).serveHttp({
      port: 0,
      authenticate,
    });
    try {
      const taskId = await createTask(http.url, 'chatty', { lines: 1, key: 'rate-1' }, { token: ALICE });
      for (let i = 0; i < 2; i++) {
        expect((await rpc(http.url, LOGS_METHOD, { taskId }, { token: ALICE })).result?.taskId).toBe(taskId);
      }
      const refused = await rpc(http.url, LOGS_METHOD, { taskId }, { token: ALICE });
      expect(refused.status).toBe(429);
      expect(refused.error).toMatchObject({ code: -32029, data: { reason: 'rate_limited' } });
      const route = await aip(http.url.replace(/\/mcp$/, ''), 'GET', `/v1/operations/${taskId}/logs`, ALICE);
      expect(route.status).toBe(429);
    } finally {
      gates.release('rate-1');
      await http.close();
      await limited.stop();
    }
  });
});
