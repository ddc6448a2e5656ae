import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TerminusError } from '../../src/core/errors.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { UNAVAILABLE_RPC_CODE } from '../../src/server/wire/retryable.js';
import { rpc, PROTOCOL } from './helpers.js';
import { LegacySession, startWireServer, type Json, type WireServer } from '../wires/helpers.js';

/**
 * Issue 12 items 6 and 11: one edge for every HTTP route. JSON only (415), a foreign Origin 403,
 * client mistakes (deep nesting, bad percent-encoding, a malformed Host, a batch, a bad Accept) get
 * client errors and store nothing; an unavailable store is a retryable 503 with Retry-After.
 */
let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server.close();
});

const stored = async () => (await server.engine.list('anonymous', { limit: 1000 })).tasks.length;
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': PROTOCOL,
};

/** A raw request, so a test can send what fetch refuses to (a bad Host header). */
function raw(
  port: number,
  options: { path: string; method?: string; headers?: Record<string, string>; body?: string },
) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: options.path,
        method: options.method ?? 'GET',
        headers: options.headers,
        setHost: options.headers?.host === undefined,
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
const port = () => Number(new URL(server.url).port);

describe('item 6: every route takes JSON only and checks Origin', () => {
  it('AIP :run with text/plain from a foreign Origin is 403 and runs nothing; text/plain alone is 415', async () => {
    const before = await stored();
    const foreign = await fetch(`${server.base}/v1/tools/work:run`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: 'https://evil.example' },
      body: '{"arguments":{}}',
    });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as Json).error.details[0].reason).toBe('ORIGIN_NOT_ALLOWED');
    const plain = await fetch(`${server.base}/v1/tools/work:run`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{"arguments":{}}',
    });
    expect(plain.status).toBe(415);
    for (const path of ['/v1/operations/x:cancel', '/v1/operations/x:wait']) {
      const form = await fetch(`${server.base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'timeout=1s',
      });
      expect(form.status).toBe(415);
    }
    expect(await stored()).toBe(before);
  });

  it('a foreign Origin is 403 on /mcp and on GET /v1 too; localhost origins and no Origin pass', async () => {
    const mcp = await rpc(server.url, 'tools/list', {}, { headers: { origin: 'https://evil.example' } });
    expect(mcp.status).toBe(403);
    expect(mcp.error?.data).toEqual({ reason: 'origin_not_allowed' });
    const get = await fetch(`${server.base}/v1/operations`, { headers: { origin: 'http://evil.example:3000' } });
    expect(get.status).toBe(403);
    const nullOrigin = await fetch(`${server.base}/v1/operations`, { headers: { origin: 'null' } });
    expect(nullOrigin.status).toBe(403);
    expect((await rpc(server.url, 'tools/list', {}, { headers: { origin: 'http://localhost:5173' } })).status).toBe(
      200,
    );
    expect((await fetch(`${server.base}/v1/operations`)).status).toBe(200);
  });

  it('an Origin configured with allowedOrigins (--allowed-origin) passes; others stay 403', async () => {
    const registry = createWireRegistry();
    const handle = await createTerminusServer({ engine: server.engine, wires: registry.adapters }).serveHttp({
      port: 0,
      allowedOrigins: ['app.example'],
    });
    try {
      const base = handle.url.replace(/\/mcp$/, '');
      expect((await fetch(`${base}/v1/operations`, { headers: { origin: 'https://app.example' } })).status).toBe(200);
      expect((await fetch(`${base}/v1/operations`, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
      expect((await fetch(`${base}/v1/operations`, { headers: { origin: 'http://localhost:8080' } })).status).toBe(403);
    } finally {
      await handle.close();
    }
  });

  it('a body over the limit is 413 in the route dialect', async () => {
    const big = await fetch(`${server.base}/v1/tools/work:run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"arguments":{"text":"${'x'.repeat(5 * 1024 * 1024)}"}}`,
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as Json).error.details[0].reason).toBe('PAYLOAD_TOO_LARGE');
  });

  it('a body-less POST (AIP :cancel) needs no content type', async () => {
    const answer = await fetch(`${server.base}/v1/operations/unknown:cancel`, { method: 'POST' });
    expect(answer.status).toBe(404);
  });
});

describe('item 11: client mistakes are client errors, and nothing is stored', () => {
  const deep = '['.repeat(10_000) + ']'.repeat(10_000);

  it('10,000 levels of nesting: -32600 on /mcp, 400 on /v1', async () => {
    const before = await stored();
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{"x":${deep}},"_meta":{"io.modelcontextprotocol/protocolVersion":"${PROTOCOL}","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`;
    const mcp = await fetch(server.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'work' },
      body,
    });
    expect(mcp.status).toBe(400);
    expect(((await mcp.json()) as Json).error).toMatchObject({ code: -32600, data: { reason: 'too_deep' } });
    const aip = await fetch(`${server.base}/v1/tools/work:run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"arguments":{"x":${deep}}}`,
    });
    expect(aip.status).toBe(400);
    expect(((await aip.json()) as Json).error.status).toBe('INVALID_ARGUMENT');
    expect(await stored()).toBe(before);
  });

  it('bad percent-encoding in a path is 400, not 500', async () => {
    for (const path of ['/v1/operations/%E0%A4%A', '/v1/tools/%zz:run', '/mcp%']) {
      const answer = await raw(port(), { path, method: path.endsWith(':run') ? 'POST' : 'GET' });
      expect(answer.status).toBe(400);
      expect(answer.body).toContain('percent-encoding');
    }
  });

  it('a malformed Host is 400 on every route', async () => {
    for (const path of ['/mcp', '/v1/operations']) {
      for (const host of ['exa mple', 'a/b', '[::1', 'x@y']) {
        const answer = await raw(port(), { path, headers: { host } });
        expect(answer.status).toBe(400);
      }
    }
  });

  it('a JSON-RPC batch is refused on the 2025 leg (batching left MCP in 2025-06-18) and on the 2026 leg', async () => {
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ]);
    for (const version of ['2025-11-25', '2025-06-18', PROTOCOL]) {
      const answer = await fetch(server.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, 'mcp-protocol-version': version },
        body: batch,
      });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as Json).error.data.reason).toBe('batch_not_supported');
    }
  });

  it('Accept is checked on every leg: modern, 2025 sessionful, 2025 stateless and /v1', async () => {
    const modern = await rpc(server.url, 'tools/list', {}, { headers: { accept: 'text/html' } });
    expect(modern.status).toBe(406);
    const session = await LegacySession.open(server.url, undefined);
    const sessionful = await fetch(server.url, {
      method: 'POST',
      headers: {
        ...MCP_HEADERS,
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': session.sessionId as string,
        accept: 'text/html',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(sessionful.status).toBe(406);
    const stateless = await fetch(server.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-protocol-version': '2025-11-25', accept: 'text/html' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(stateless.status).toBe(406);
    expect((await fetch(`${server.base}/v1/operations`, { headers: { accept: 'text/html' } })).status).toBe(406);
    expect((await fetch(`${server.base}/v1/operations`, { headers: { accept: 'application/json;q=0' } })).status).toBe(
      406,
    );
    expect((await fetch(`${server.base}/v1/operations`, { headers: { accept: 'text/html, */*;q=0.8' } })).status).toBe(
      200,
    );
    await session.close();
  });
});

describe('item 11: an unavailable store is retryable, never -32603', () => {
  /** The real engine behind a store that answers like a full disk (the store maps it to `unavailable`). */
  let http: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    const full = new TerminusError('unavailable', 'database or disk is full');
    const engine = server.engine;
    const broken: TaskEngine = {
      ...engine,
      tools: engine.tools,
      events: engine.events,
      submit: () => Promise.reject(full),
      get: () => Promise.reject(full),
      list: () => Promise.reject(full),
      lookupKey: () => Promise.reject(full),
      cancel: () => Promise.reject(full),
      runInline: (c) => engine.runInline(c),
      respond: () => Promise.reject(full),
      waitForChange: () => Promise.reject(full),
      start: () => undefined,
      stop: () => Promise.resolve(),
    };
    const registry = createWireRegistry();
    const handle = await createTerminusServer({ engine: broken, wires: registry.adapters }).serveHttp({ port: 0 });
    http = { url: handle.url, close: () => handle.close() };
  });
  afterAll(async () => http.close());

  it('Tasks extension: HTTP 503 + Retry-After carrying a retryable JSON-RPC error', async () => {
    const answer = await fetch(http.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-method': 'tasks/get', 'mcp-name': 'abc' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/get',
        params: {
          taskId: 'abc',
          _meta: {
            'io.modelcontextprotocol/protocolVersion': PROTOCOL,
            'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
          },
        },
      }),
    });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    const body = (await answer.json()) as Json;
    expect(body.error.code).toBe(UNAVAILABLE_RPC_CODE);
    expect(body.error.code).not.toBe(-32603);
    expect(body.error.data).toMatchObject({ reason: 'unavailable', retryable: true, retryAfterMs: 1000 });
  });

  it('AIP-151: 503 UNAVAILABLE with Retry-After', async () => {
    const answer = await fetch(`${http.url.replace(/\/mcp$/, '')}/v1/operations/abc`);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(((await answer.json()) as Json).error.status).toBe('UNAVAILABLE');
  });

  it('SEP-1391 and 2025-11-25 answer the retryable code with 503 too, though over SSE', async () => {
    const session = new LegacySession(http.url, undefined);
    for (const [method, params] of [
      ['tools/async/status', { token: 'abcdefghijklmnopqrstuvwxyz012345' }],
      ['tasks/get', { taskId: 'abc' }],
    ] as const) {
      const reply = await session.request(method, params);
      expect(reply.error?.code).toBe(UNAVAILABLE_RPC_CODE);
      // The 2025 legs answer over SSE: the edge reads the first event before the status goes out.
      expect(reply.status).toBe(503);
    }
  });
});
