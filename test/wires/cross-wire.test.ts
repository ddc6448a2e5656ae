import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TaskStatus, WireName } from '../../src/core/task.js';
import { SEP1391_CAPABILITY } from '../../src/server/wire/sep-1391/index.js';
import { rpc } from '../server/helpers.js';
import { ALICE, LegacySession, aip, eventually, startWireServer, type Json, type WireServer } from './helpers.js';

/**
 * The same durable task through every wire (reference section 4): a task created through each wire
 * is read, cancelled and listed through every wire, with the same status and result everywhere
 * (each wire in its own vocabulary, normalised back to the core statuses here). Real HTTP on
 * 127.0.0.1, one authenticated principal (alice) on every wire.
 */

/** One wire as a client: every answer normalised to core vocabulary. */
interface WireClient {
  readonly wire: WireName;
  create(args: Record<string, unknown>): Promise<string>;
  status(id: string): Promise<TaskStatus>;
  /** The `CallToolResult` of a completed task, without wire-only keys. */
  result(id: string): Promise<Json>;
  cancel(id: string): Promise<void>;
  /** Ids this wire lists for the caller; undefined when the wire has no listing. */
  list?(): Promise<string[]>;
}

let server: WireServer;
let clients: WireClient[];

function strip(result: Json): Json {
  const { _meta: _m, resultType: _r, '@type': _t, ...rest } = result as Record<string, unknown>;
  return rest;
}

function tasksExtClient(): WireClient {
  const call = async (method: string, params: Record<string, unknown>) => {
    const answer = await rpc(server.url, method, params, { token: ALICE });
    if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result;
  };
  return {
    wire: 'mcp-tasks-ext',
    create: async (args) => (await call('tools/call', { name: 'work', arguments: args })).taskId as string,
    status: async (id) => (await call('tasks/get', { taskId: id })).status as TaskStatus,
    result: async (id) => strip((await call('tasks/get', { taskId: id })).result),
    cancel: async (id) => void (await call('tasks/cancel', { taskId: id })),
    // SEP-2663 has no tasks/list: not listable on this wire.
  };
}

function rev2025Client(session: LegacySession): WireClient {
  const call = async (method: string, params: Record<string, unknown>) => {
    const answer = await session.request(method, params);
    if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result;
  };
  return {
    wire: 'mcp-2025-11-25',
    create: async (args) =>
      (await call('tools/call', { name: 'work', arguments: args, task: {} })).task.taskId as string,
    status: async (id) => (await call('tasks/get', { taskId: id })).status as TaskStatus,
    result: async (id) => strip(await call('tasks/result', { taskId: id })),
    cancel: async (id) => void (await call('tasks/cancel', { taskId: id })),
    list: async () => {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await call('tasks/list', cursor === undefined ? {} : { cursor });
        ids.push(...page.tasks.map((t: { taskId: string }) => t.taskId));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return ids;
    },
  };
}

function sepClient(session: LegacySession): WireClient {
  return {
    wire: 'sep-1391',
    // No client token: the server's token is the task id, so the other wires can name the task.
    create: async (args) => {
      const answer = await session.request('tools/call', { name: 'work', arguments: args, operation: {} });
      return answer.result.operation.token as string;
    },
    status: async (id) => {
      const answer = await session.request('tools/async/status', { token: id });
      if (answer.error?.data?.status === 'canceled') return 'cancelled'; // L-15: an error on this wire
      if (answer.error !== undefined) throw new Error(JSON.stringify(answer.error));
      const status = answer.result.status as string;
      return (status === 'submitted' ? 'working' : status) as TaskStatus;
    },
    result: async (id) => strip((await session.request('tools/async/result', { token: id })).result.result),
    cancel: async (id) => {
      const answer = await session.request('tools/async/cancel', { token: id });
      if (answer.error !== undefined) throw new Error(JSON.stringify(answer.error));
    },
  };
}

function aipClient(): WireClient {
  const get = async (id: string) => {
    const answer = await aip(server.base, 'GET', `/v1/operations/${id}`, ALICE);
    if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
    return answer.body;
  };
  return {
    wire: 'aip-151',
    create: async (args) => {
      const answer = await aip(server.base, 'POST', '/v1/tools/work:run', ALICE, { arguments: args });
      return (answer.body.name as string).replace(/^operations\//, '');
    },
    status: async (id) => {
      const op = await get(id);
      if (!op.done) return op.metadata.status as TaskStatus;
      if (op.response !== undefined) return 'completed';
      return op.error.code === 1 ? 'cancelled' : 'failed';
    },
    result: async (id) => strip((await get(id)).response),
    cancel: async (id) => {
      const answer = await aip(server.base, 'POST', `/v1/operations/${id}:cancel`, ALICE);
      if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
    },
    list: async () => {
      const answer = await aip(server.base, 'GET', '/v1/operations?page_size=1000', ALICE);
      return answer.body.operations.map((o: { name: string }) => o.name.replace(/^operations\//, '')) as string[];
    },
  };
}

beforeAll(async () => {
  server = await startWireServer();
  const legacy = await LegacySession.open(server.url, ALICE);
  const sep = await LegacySession.open(server.url, ALICE, { experimental: { [SEP1391_CAPABILITY]: {} } });
  clients = [tasksExtClient(), rev2025Client(legacy), sepClient(sep), aipClient()];
});
afterAll(async () => {
  await server.close();
});

const WIRE_NAMES: WireName[] = ['mcp-tasks-ext', 'mcp-2025-11-25', 'sep-1391', 'aip-151'];
const PAIRS = WIRE_NAMES.flatMap((creator) => WIRE_NAMES.map((other) => [creator, other] as const));
const by = (wire: WireName) => clients.find((c) => c.wire === wire) as WireClient;

describe('one task, every wire', () => {
  test.each(PAIRS)(
    'created on %s: read, cancelled and listed through %s, same everywhere',
    async (creatorName, otherName) => {
      const creator = by(creatorName);
      const other = by(otherName);
      const text = `${creatorName}->${otherName}`;

      const done = await creator.create({ text });
      await eventually(
        () => other.status(done),
        (s) => s === 'completed',
      );
      const expected = { content: [{ type: 'text', text: `done ${text}` }], structuredContent: { ok: true } };
      for (const reader of clients) {
        expect(await reader.status(done), reader.wire).toBe('completed');
        expect(await reader.result(done), reader.wire).toEqual(expected);
      }

      const key = `x-${text}`;
      const blocked = await creator.create({ mode: 'block', key });
      expect(await other.status(blocked)).toBe('working');
      await other.cancel(blocked);
      server.gates.release(key);
      for (const reader of clients) expect(await reader.status(blocked), reader.wire).toBe('cancelled');

      if (other.list !== undefined) {
        const listed = await other.list();
        expect(listed).toContain(done);
        expect(listed).toContain(blocked);
      }
      const record = await server.engine.get('auth:alice', done);
      expect(record.wire).toBe(creatorName);
    },
  );

  test.each(WIRE_NAMES)(
    'T-24: a tool error created on %s is failed on 2025-11-25 only, with the same result everywhere',
    async (creatorName) => {
      const id = await by(creatorName).create({ mode: 'tool_error' });
      await eventually(
        () => by('aip-151').status(id),
        (s) => s === 'completed',
      );
      const expected = { content: [{ type: 'text', text: 'tool says no' }], isError: true };
      for (const reader of clients) {
        expect(await reader.status(id), reader.wire).toBe(reader.wire === 'mcp-2025-11-25' ? 'failed' : 'completed');
        expect(await reader.result(id), reader.wire).toEqual(expected);
      }
    },
  );
});
