/**
 * The HTTP channel and the Tasks-extension adapter against canned HTTP answers: every failure kind
 * of the wire port comes from exactly one kind of answer, and requests carry the 2026 framing.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import { createHttpConnection, createTasksExtWire, isRpcError } from '../../src/executor/adapters/index.js';
import { WireFailure } from '../../src/executor/wire-port.js';

type Canned = (body: Record<string, unknown>, req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let url: string;
let canned: Canned = () => undefined;
const received: { headers: IncomingMessage['headers']; body: Record<string, unknown> }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      received.push({ headers: req.headers, body });
      canned(body, req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
};

async function failureOf(promise: Promise<unknown>): Promise<WireFailure> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WireFailure) return error;
    throw error;
  }
  throw new Error('expected a WireFailure');
}

describe('HTTP channel', () => {
  it('frames a modern request: envelope in _meta, Mcp-Method, Mcp-Name, protocol version', async () => {
    canned = (body, _req, res) => json(res, 200, { jsonrpc: '2.0', id: body.id, result: { ok: true } });
    const connection = createHttpConnection({ url, clock: systemClock });
    expect(await connection.request('tasks/get', { taskId: 'abc' })).toEqual({ ok: true });
    const last = received.at(-1)!;
    expect(last.headers['mcp-method']).toBe('tasks/get');
    expect(last.headers['mcp-name']).toBe('abc');
    expect(last.headers['mcp-protocol-version']).toBe('2026-07-28');
    const meta = (last.body.params as Record<string, Record<string, unknown>>)._meta!;
    expect(meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
    expect(meta['io.modelcontextprotocol/clientCapabilities']).toMatchObject({
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    });
  });

  it('429 and 503 are throttled with Retry-After in ms (delta seconds and HTTP date)', async () => {
    const connection = createHttpConnection({ url, clock: systemClock });
    canned = (_b, _r, res) => json(res, 429, {}, { 'retry-after': '2' });
    const throttled = await failureOf(connection.request('tasks/get', { taskId: 'a' }));
    expect([throttled.kind, throttled.httpStatus, throttled.retryAfterMs]).toEqual(['throttled', 429, 2000]);
    const at = new Date(Date.now() + 5_000).toUTCString();
    canned = (_b, _r, res) => json(res, 503, {}, { 'retry-after': at });
    const unavailable = await failureOf(connection.request('tasks/get', { taskId: 'a' }));
    expect(unavailable.kind).toBe('throttled');
    expect(unavailable.httpStatus).toBe(503);
    expect(unavailable.retryAfterMs).toBeGreaterThan(3_000);
    expect(unavailable.retryAfterMs).toBeLessThanOrEqual(5_000);
  });

  it('truncated or schema-invalid JSON is malformed; a JSON-RPC error is a typed rejection', async () => {
    const connection = createHttpConnection({ url, clock: systemClock });
    canned = (_b, _r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"jsonrpc":"2.0","id":1,"result":{"sta');
    };
    expect((await failureOf(connection.request('tasks/get', { taskId: 'a' }))).kind).toBe('malformed');
    canned = (body, _r, res) => json(res, 200, { jsonrpc: '2.0', id: body.id, result: 'not an object' });
    expect((await failureOf(connection.request('tasks/get', { taskId: 'a' }))).kind).toBe('malformed');
    canned = (body, _r, res) =>
      json(res, 200, { jsonrpc: '2.0', id: body.id, error: { code: -32602, message: 'nope', data: { reason: 'x' } } });
    const error = await failureOf(connection.request('tools/call', { name: 't' }));
    expect(isRpcError(error, -32602)).toBe(true);
    expect(error.kind).toBe('rejected');
  });

  it('no answer is lost: dropped connection, refused connection, timeout, stream ended early', async () => {
    canned = (_b, req) => req.socket.destroy();
    const connection = createHttpConnection({ url, clock: systemClock, timeoutMs: 300 });
    expect((await failureOf(connection.request('tasks/get', { taskId: 'a' }))).kind).toBe('lost');
    const refused = createHttpConnection({ url: 'http://127.0.0.1:1/mcp', clock: systemClock });
    expect((await failureOf(refused.request('tasks/get', { taskId: 'a' }))).kind).toBe('lost');
    canned = () => undefined; // never answers
    expect((await failureOf(connection.request('tasks/get', { taskId: 'a' }))).kind).toBe('lost');
    canned = (_b, _r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n');
    };
    expect((await failureOf(connection.request('tasks/get', { taskId: 'a' }))).kind).toBe('lost');
  });

  it('reads the answer out of an event stream', async () => {
    canned = (body, _r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { x: 1 } })}\n\n`);
    };
    const connection = createHttpConnection({ url, clock: systemClock });
    expect(await connection.request('tasks/get', { taskId: 'a' })).toEqual({ x: 1 });
  });
});

describe('Tasks-extension adapter on canned answers', () => {
  const task = {
    taskId: 't1',
    status: 'working',
    createdAt: '2026-01-01T00:00:00.000Z',
    lastUpdatedAt: '2026-01-01T00:00:00.000Z',
    ttlMs: 60_000,
    pollIntervalMs: 500,
  };

  it('-32602 on tasks/get is not_found; -32601 on the lookup is unsupported; the key travels in _meta', async () => {
    const wire = createTasksExtWire({ channel: createHttpConnection({ url, clock: systemClock }).request });
    canned = (body, _r, res) =>
      json(res, 200, {
        jsonrpc: '2.0',
        id: body.id,
        error: { code: -32602, message: 'Failed to retrieve task: Task not found' },
      });
    expect((await failureOf(wire.getStatus('gone'))).kind).toBe('not_found');
    canned = (body, _r, res) =>
      json(res, 404, { jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'Method not found' } });
    expect(await wire.lookupKey('k')).toEqual({ kind: 'unsupported' });
    canned = (body, _r, res) =>
      json(res, 200, { jsonrpc: '2.0', id: body.id, result: { resultType: 'task', content: [], ...task } });
    const answer = await wire.submit({ tool: 'report', args: { a: 1 }, submissionKey: 'key-1' });
    expect(answer).toMatchObject({ kind: 'task', taskId: 't1', status: 'working', pollIntervalMs: 500 });
    expect(answer.kind === 'task' && answer.expiresAt).toBe(Date.parse(task.createdAt) + 60_000);
    const params = received.at(-1)!.body.params as Record<string, Record<string, unknown>>;
    expect(params._meta!['mcp-terminus.dev/submissionKey']).toBe('key-1');
    expect(received.at(-1)!.headers['mcp-name']).toBe('report');
  });

  it('a completed tasks/get without a CallToolResult is malformed, never a result', async () => {
    const wire = createTasksExtWire({ channel: createHttpConnection({ url, clock: systemClock }).request });
    canned = (body, _r, res) =>
      json(res, 200, {
        jsonrpc: '2.0',
        id: body.id,
        result: { resultType: 'complete', ...task, status: 'completed', result: { resultType: 'complete' } },
      });
    expect((await failureOf(wire.fetchResult('t1'))).kind).toBe('malformed');
    canned = (body, _r, res) =>
      json(res, 200, {
        jsonrpc: '2.0',
        id: body.id,
        result: {
          resultType: 'complete',
          ...task,
          status: 'completed',
          result: { resultType: 'complete', content: [{ type: 'text', text: 'ok' }] },
        },
      });
    expect(await wire.fetchResult('t1')).toEqual({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'ok' }] },
    });
  });
});
