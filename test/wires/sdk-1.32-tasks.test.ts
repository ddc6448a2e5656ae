import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  McpError,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { RELATED_TASK_META } from '../../src/server/wire/rev2025-11-25/index.js';
import { ALICE, BOB, eventually, startWireServer, type Json, type WireServer } from './helpers.js';

/**
 * The real SDK 1.32.x client (`client.experimental.tasks.*`) against our server's 2025-11-25 wire
 * over HTTP (the sessionful legacy leg). Test names carry the checklist ids they cover.
 */
let server: WireServer;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await server.close();
});

async function connect(token: string | undefined, onElicit?: (params: Json) => Json): Promise<Client> {
  const client = new Client(
    { name: 'sdk-1.32-test', version: '1.0.0' },
    { capabilities: onElicit === undefined ? {} : { elicitation: {} } },
  );
  if (onElicit !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (request) => onElicit(request.params));
  }
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }));
  clients.push(client);
  await client.listTools(); // caches execution.taskSupport, which callToolStream needs
  return client;
}

async function drain(client: Client, name: string, args: Record<string, unknown>) {
  const messages: Json[] = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name, arguments: args },
    CallToolResultSchema,
  )) {
    messages.push(message);
  }
  return messages;
}

async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error('expected a JSON-RPC error');
}

describe('2025-11-25 tasks with @modelcontextprotocol/sdk 1.32 (T-01, T-15, T-20, T-39, T-41)', () => {
  test('T-01 T-15 T-20 T-32 T-33 T-35 T-37 T-41: callToolStream completes and tasks/result carries related-task _meta', async () => {
    const client = await connect(ALICE);
    expect(client.getServerCapabilities()?.tasks).toMatchObject({
      cancel: {},
      list: {},
      requests: { tools: { call: {} } },
    });
    const messages = await drain(client, 'work', { text: 'sdk' });
    expect(messages[0].type).toBe('taskCreated');
    expect(messages[0].task.status).toBe('working');
    const taskId = messages[0].task.taskId as string;
    const last = messages.at(-1);
    expect(last.type).toBe('result');
    expect(last.result.content).toEqual([{ type: 'text', text: 'done sdk' }]);

    const task = await client.experimental.tasks.getTask(taskId);
    expect(task).toMatchObject({ taskId, status: 'completed', pollInterval: 50 });
    expect(Number.isNaN(Date.parse(task.createdAt))).toBe(false);
    expect(Number.isNaN(Date.parse(task.lastUpdatedAt))).toBe(false);
    expect(task.ttl).toBe(3_600_000);
    const payload = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(payload._meta?.[RELATED_TASK_META]).toEqual({ taskId });
  });

  test('T-24 T-25 T-40: a tool error result makes the task failed, tasks/result still returns that result', async () => {
    const client = await connect(ALICE);
    const messages = await drain(client, 'work', { mode: 'tool_error' });
    const taskId = messages[0].task.taskId as string;
    expect(messages.at(-1).type).toBe('error'); // the 1.32 client reports `failed` as an error
    const task = await client.experimental.tasks.getTask(taskId);
    expect(task.status).toBe('failed');
    expect(task.statusMessage).toBe('tool says no');
    const payload = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(payload).toMatchObject({ isError: true, content: [{ type: 'text', text: 'tool says no' }] });
  });

  test('T-38 T-40: a JSON-RPC error of the tool comes back from tasks/result as that error', async () => {
    const client = await connect(ALICE);
    const messages = await drain(client, 'work', { mode: 'rpc_error' });
    const taskId = messages[0].task.taskId as string;
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('failed');
    const error = await rpcError(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema));
    expect(error.code).toBe(-32010);
    expect(error.data).toEqual({ backend: 'x' });
  });

  test('T-62 T-63 T-64 T-65: cancel answers the cancelled task; cancelling again is -32602; it stays cancelled', async () => {
    const client = await connect(ALICE);
    const stream = client.experimental.tasks.callToolStream(
      { name: 'work', arguments: { mode: 'block', key: 'sdk-cancel' } },
      CallToolResultSchema,
    );
    const first = await stream.next();
    const taskId = (first.value as Json).task.taskId as string;
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled).toMatchObject({ taskId, status: 'cancelled' });
    const again = await rpcError(client.experimental.tasks.cancelTask(taskId));
    expect(again.code).toBe(-32602);
    server.gates.release('sdk-cancel');
    const rest: Json[] = [];
    for await (const message of stream) rest.push(message);
    expect(rest.at(-1).type).toBe('error');
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
  });

  test('T-43 T-50 T-51 T-52 T-53: an input round is delivered on the tasks/result stream and answered', async () => {
    const asked: Json[] = [];
    const client = await connect(ALICE, (params) => {
      asked.push(params);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    const messages = await drain(client, 'work', { mode: 'ask' });
    const taskId = messages[0].task.taskId as string;
    expect(messages.some((m) => m.type === 'taskStatus' && m.task.status === 'input_required')).toBe(true);
    expect(messages.at(-1)).toMatchObject({
      type: 'result',
      result: { content: [{ type: 'text', text: 'hello Ada' }] },
    });
    expect(asked).toHaveLength(1);
    expect(asked[0].message).toBe('Who are you?');
    expect(asked[0]._meta?.[RELATED_TASK_META]).toEqual({ taskId });
  });

  test('T-72 T-73 T-74 T-59: tasks/list is scoped to the principal; a foreign task is not found', async () => {
    const alice = await connect(ALICE);
    const bob = await connect(BOB);
    const mine = (await drain(alice, 'work', { text: 'a' }))[0].task.taskId as string;
    const theirs = (await drain(bob, 'work', { text: 'b' }))[0].task.taskId as string;
    const aliceIds = (await alice.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
    const bobIds = (await bob.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
    expect(aliceIds).toContain(mine);
    expect(aliceIds).not.toContain(theirs);
    expect(bobIds).toContain(theirs);
    expect(bobIds).not.toContain(mine);
    expect((await rpcError(bob.experimental.tasks.getTask(mine))).code).toBe(-32602);
    expect((await rpcError(bob.experimental.tasks.cancelTask(mine))).code).toBe(-32602);
    expect((await rpcError(bob.experimental.tasks.getTaskResult(mine, CallToolResultSchema))).code).toBe(-32602);
  });

  test('T-47 T-49: notifications/tasks/status reach the session that created the task', async () => {
    const client = await connect(ALICE);
    const seen: Json[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
      seen.push(n.params);
    });
    const stream = client.experimental.tasks.callToolStream(
      { name: 'work', arguments: { mode: 'block', key: 'sdk-notify' } },
      CallToolResultSchema,
    );
    const taskId = ((await stream.next()).value as Json).task.taskId as string;
    server.gates.release('sdk-notify');
    for await (const message of stream) void message;
    const completed = await eventually(
      () => Promise.resolve(seen.filter((n) => n.taskId === taskId && n.status === 'completed')),
      (found) => found.length === 1,
    );
    expect(completed[0]._meta?.[RELATED_TASK_META]).toBeUndefined();
    expect(completed[0].ttl).toBe(3_600_000);
  });
});
