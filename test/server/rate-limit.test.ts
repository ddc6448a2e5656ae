import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, test } from 'vitest';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createStdioConnection } from '../../src/executor/adapters/stdio-channel.js';
import { WireFailure } from '../../src/executor/wire-port.js';
import { createEngine, type EngineOptions } from '../../src/runner/engine.js';
import { LIMIT_EXCEEDED_CODE, type ServerLimits } from '../../src/server/limits.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { conformanceTools } from '../../src/tools/conformance/index.js';
import { killAll, MAIN, ROOT, start as startChild, tempDir, tsNode } from '../cli/helpers.js';
import { aip, ALICE, authenticate, BOB, LegacySession } from '../wires/helpers.js';
import { EXT, PROTOCOL, rpc } from './helpers.js';

/**
 * Issue 12 item 9 (T-78, T-79): per-caller rate limits on tool calls and task reads answer HTTP 429
 * with Retry-After and JSON-RPC -32029 `{ reason, limit, retryAfterMs }` on every wire; the
 * per-caller cap on unfinished tasks answers -32029 too.
 */
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
  killAll();
});

async function start(limits: Partial<ServerLimits>, engineOptions: Partial<EngineOptions> = {}) {
  const store = createMemoryTaskStore();
  const engine = createEngine({ store, tools: conformanceTools, clock: systemClock, ids: systemIds, ...engineOptions });
  engine.start();
  const registry = createWireRegistry({ disabled: [], limits });
  const server = createTerminusServer({ engine: registry.guard(engine), wires: registry.adapters });
  const http = await server.serveHttp({ port: 0, authenticate });
  close = async () => {
    await http.close();
    await engine.stop();
    await store.close();
  };
  return { url: http.url, base: http.url.replace(/\/mcp$/, '') };
}

const call = (url: string, token: string) =>
  rpc(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 } }, { token });

/** The same request as `rpc`, raw, to see the status and headers. */
async function rawCall(url: string, token: string) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL,
      'mcp-method': 'tools/call',
      'mcp-name': 'slow_compute',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 99,
      method: 'tools/call',
      params: {
        name: 'slow_compute',
        arguments: { seconds: 30 },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': PROTOCOL,
          'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } },
        },
      },
    }),
  });
}

describe('rate limits per caller (issue 12 item 9, T-78)', () => {
  test('tool calls over createsPerMinute: 429 + Retry-After + -32029 with the delay; another caller is served', async () => {
    const { url } = await start({ createsPerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await call(url, ALICE)).result?.resultType).toBe('task');
    const refused = await rawCall(url, ALICE);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as { id: number; error: { code: number; data: { retryAfterMs: number } } };
    expect(body).toMatchObject({
      id: 99,
      error: { code: LIMIT_EXCEEDED_CODE, data: { reason: 'rate_limited', limit: 3 } },
    });
    // One token every 20 s at 3 a minute: the delay says so, and Retry-After is it in seconds.
    expect(body.error.data.retryAfterMs).toBeGreaterThan(15_000);
    expect(body.error.data.retryAfterMs).toBeLessThanOrEqual(20_000);
    expect(retryAfter).toBe(Math.ceil(body.error.data.retryAfterMs / 1000));
    expect((await call(url, BOB)).result?.resultType).toBe('task');
  });

  test('the same buckets hold on the 2025 wire and on AIP-151 (:run creates, GET polls)', async () => {
    const { url, base } = await start({ createsPerMinute: 2, pollsPerMinute: 3 });
    const session = await LegacySession.open(url, ALICE, { tasks: { requests: { tools: { call: {} } } } });
    const legacy = await session.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 30 },
      task: { ttl: 60_000 },
    });
    const taskId = legacy.result.task.taskId as string;
    expect((await call(url, ALICE)).result?.resultType).toBe('task');
    const third = await session.request('tools/call', { name: 'slow_compute', arguments: { seconds: 30 }, task: {} });
    expect(third.error).toMatchObject({ code: LIMIT_EXCEEDED_CODE, data: { reason: 'rate_limited' } });
    const run = await aip(base, 'POST', '/v1/tools/slow_compute:run', ALICE, { arguments: { seconds: 30 } });
    expect(run.status).toBe(429);
    expect(run.body.error).toMatchObject({ status: 'RESOURCE_EXHAUSTED', details: [{ reason: 'RATE_LIMITED' }] });
    for (let i = 0; i < 3; i++) expect((await session.request('tasks/get', { taskId })).result?.status).toBe('working');
    const poll = await aip(base, 'GET', `/v1/operations/${taskId}`, ALICE);
    expect(poll.status).toBe(429);
    expect((await aip(base, 'GET', `/v1/operations/${taskId}`, BOB)).status).toBe(404);
  });

  test('T-78: event reads count as task reads: terminus/tasks/events and tools/async/events answer the limit', async () => {
    const { url } = await start({ pollsPerMinute: 3 });
    const session = await LegacySession.open(url, ALICE, { experimental: { 'mcp-terminus.dev/sep-1391': {} } });
    const created = await session.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 30 },
      operation: { token: 'rate-events-1' },
    });
    expect(created.result?.operation?.token).toBe('rate-events-1');
    const task = await session.request('tools/async/events', { token: 'rate-events-1' });
    const taskId = task.result?.taskId as string;
    expect(taskId).toBeTruthy();
    for (let i = 0; i < 2; i++) {
      expect((await session.request('terminus/tasks/events', { taskId })).result?.taskId).toBe(taskId);
    }
    for (const [method, params] of [
      ['terminus/tasks/events', { taskId }],
      ['tools/async/events', { token: 'rate-events-1' }],
    ] as const) {
      const refused = await session.request(method, params);
      expect(refused.error, method).toMatchObject({ code: LIMIT_EXCEEDED_CODE, data: { reason: 'rate_limited' } });
    }
  });

  test('T-79: over the per-caller cap on unfinished tasks, tools/call answers -32029 too_many_active_tasks', async () => {
    const { url } = await start({}, { maxLiveTasksPerOwner: 1 });
    expect((await call(url, ALICE)).result?.resultType).toBe('task');
    const refused = await call(url, ALICE);
    expect(refused.error).toMatchObject({
      code: LIMIT_EXCEEDED_CODE,
      data: { reason: 'too_many_active_tasks', limit: 1, retryAfterMs: expect.any(Number) },
    });
    expect((await call(url, BOB)).result?.resultType).toBe('task');
  });
});

describe('terminus serve limit flags', () => {
  test('--creates-per-minute 1: the second tool call of a caller is 429 with Retry-After', async () => {
    const dir = tempDir('terminus-limits-cli-');
    try {
      const db = `${dir.path}/t.db`;
      const args = ['serve', '--port', '0', '--db', db, '--fixtures', 'conformance', '--creates-per-minute', '1'];
      const child = startChild(tsNode(MAIN, ...args), { cwd: dir.path });
      const line = await child.waitFor(/terminus listening on (\S+)/, 'stdout');
      const url = /terminus listening on (\S+)/.exec(line)?.[1] ?? '';
      expect((await call(url, 'anonymous')).result?.resultType).toBe('task');
      const refused = await rawCall(url, 'anonymous');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      killAll();
      dir.remove();
    }
  });
});

describe('stdio rate limit', () => {
  test('terminus serve --stdio --creates-per-minute 2: the third tool call is -32029 with data.retryAfterMs', async () => {
    const dir = tempDir('terminus-limits-stdio-');
    const client = new Client({ name: 'limits', version: '1.0.0' }, { capabilities: {} });
    try {
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [
            ...tsNode(MAIN, 'serve', '--stdio', '--fixtures', 'conformance'),
            ...['--db', `${dir.path}/s.db`, '--creates-per-minute', '2'],
          ],
          cwd: ROOT,
          stderr: 'ignore',
        }),
      );
      for (let i = 0; i < 2; i++) {
        const result = await client.callTool({ name: 'greet', arguments: { name: 'x' } });
        expect(result.isError).toBeFalsy();
      }
      const refused = await client.callTool({ name: 'greet', arguments: { name: 'x' } }).then(
        () => undefined,
        (e: unknown) => e as { code?: number; data?: { reason?: string; retryAfterMs?: number } },
      );
      expect(refused?.code).toBe(LIMIT_EXCEEDED_CODE);
      expect(refused?.data).toMatchObject({ reason: 'rate_limited', limit: 2 });
      expect(refused?.data?.retryAfterMs).toBeGreaterThan(0);
      // Other methods still work on the same connection.
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
      dir.remove();
    }
  });

  test('the executor reads the stdio -32029 as a throttle with its delay (C6), not as a refused call', async () => {
    const dir = tempDir('terminus-limits-stdio-exec-');
    const connection = await createStdioConnection({
      command: process.execPath,
      args: [
        ...tsNode(MAIN, 'serve', '--stdio', '--fixtures', 'conformance'),
        ...['--db', `${dir.path}/s.db`, '--creates-per-minute', '1'],
      ],
      cwd: ROOT,
      stderr: 'ignore',
      clock: systemClock,
      era: 'modern',
    });
    try {
      const call = () => connection.request('tools/call', { name: 'greet', arguments: { name: 'x' } });
      expect(await call()).toHaveProperty('content');
      const refused = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(WireFailure);
      expect((refused as WireFailure).kind).toBe('throttled');
      expect((refused as WireFailure).rpcCode).toBe(LIMIT_EXCEEDED_CODE);
      expect((refused as WireFailure).retryAfterMs).toBeGreaterThan(0);
    } finally {
      await connection.close();
      dir.remove();
    }
  });
});
