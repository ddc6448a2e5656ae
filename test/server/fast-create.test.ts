import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { conformancePreflights, conformanceTools } from '../../src/tools/conformance/index.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { z } from 'zod';
import { EXT, PROTOCOL } from './helpers.js';

// Issue 31 item 3: a `tools/call` that creates a task is answered ahead of the SDK over HTTP (the
// 2026-07-28 stateless wire and 2025-11-25 sessions), and must answer what the SDK answers. Each
// request goes to two servers over ONE engine, `fastPath: true` and `fastPath: false`; a create
// makes a new task on each side, so the answers are compared with the task id, its times and the
// session id written as placeholders (key order and every other byte kept). Each case also says
// whether the fast side answered without the SDK (no web `Request` built) or handed it over.

const SUBMISSION_KEY = 'mcp-terminus.dev/submissionKey';
const WEBHOOK = 'mcp-terminus.dev/webhook';
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/** A task tool whose `region` argument is mirrored in an `Mcp-Param-Region` header (SEP-2243). */
const regionalJob = defineTaskTool({
  name: 'regional_job',
  description: 'A task whose region travels in a header too.',
  inputSchema: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }) }),
  handler: async () => ({ content: [] }),
});
const LEGACY = '2025-11-25';
const ACCEPT = 'application/json, text/event-stream';

interface Side {
  readonly url: string;
  close(): Promise<void>;
}

let store: ReturnType<typeof createMemoryTaskStore>;
let engine: TaskEngine;
let fast: Side;
let slow: Side;

async function authenticate(req: IncomingMessage) {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  return { token: header, clientId: header.replace(/^Bearer /, ''), scopes: [] };
}

async function side(fastPath: boolean): Promise<Side> {
  const registry = createWireRegistry({ limits: { createsPerMinute: 0, pollsPerMinute: 0 } });
  const server = createTerminusServer({
    engine: registry.guard(engine),
    wires: registry.adapters,
    preflights: conformancePreflights,
    name: 'fast-create-test',
    version: '9.9.9',
  });
  const http = await server.serveHttp({ port: 0, authenticate, fastPath });
  return { url: http.url, close: () => http.close() };
}

beforeAll(async () => {
  store = createMemoryTaskStore();
  engine = createEngine({
    store,
    tools: [...conformanceTools, regionalJob],
    clock: systemClock,
    ids: systemIds,
    claimIntervalMs: 20,
    webhooks: { policy: { allowHosts: ['127.0.0.1'] } },
  });
  engine.start();
  [fast, slow] = await Promise.all([side(true), side(false)]);
});

afterAll(async () => {
  await Promise.all([fast.close(), slow.close()]);
  await engine.stop();
  await store.close();
});

interface Raw {
  readonly body: unknown;
  readonly headers: Record<string, string>;
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const IGNORED_HEADERS = new Set(['date', 'connection', 'keep-alive']);

/** Sends `raw`; resolves with the answer and whether the SDK served it (a web `Request` was built). */
async function send(url: string, raw: Raw): Promise<{ answer: Answer; sdk: boolean }> {
  const Original = globalThis.Request;
  let built = 0;
  globalThis.Request = class Counted extends Original {
    constructor(...args: ConstructorParameters<typeof Request>) {
      super(...args);
      built += 1;
    }
  };
  try {
    const response = await fetch(url, { method: 'POST', headers: raw.headers, body: JSON.stringify(raw.body) });
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      if (!IGNORED_HEADERS.has(name)) headers[name] = value;
    });
    return { answer: { status: response.status, headers, body: await response.text() }, sdk: built > 0 };
  } finally {
    globalThis.Request = Original;
  }
}

/** The created task's id, times and the session id as placeholders; every other byte as sent. */
function scrub(answer: Answer, session?: string): Answer {
  let body = answer.body;
  if (session !== undefined) body = body.replaceAll(session, '<session>');
  for (const match of body.matchAll(/"taskId":"([^"]+)"/g)) body = body.replaceAll(match[1] as string, '<task>');
  body = body.replace(/"(createdAt|lastUpdatedAt)":"[^"]+"/g, '"$1":"<time>"');
  const headers = { ...answer.headers };
  if (session !== undefined && headers['mcp-session-id'] === session) headers['mcp-session-id'] = '<session>';
  return { ...answer, headers, body };
}

type Expect = 'fast' | 'sdk';

/** `build(side)` to both sides; the scrubbed answers must match, and the fast side must have served as expected. */
async function same(
  build: (s: 'fast' | 'slow') => Raw,
  expected: Expect,
  sessions?: [string, string],
): Promise<Answer> {
  const onFast = await send(fast.url, build('fast'));
  const onSlow = await send(slow.url, build('slow'));
  expect(onSlow.sdk, 'the SDK side serves through the SDK').toBe(true);
  const answer = scrub(onFast.answer, sessions?.[0]);
  expect(answer).toEqual(scrub(onSlow.answer, sessions?.[1]));
  expect(onFast.sdk, expected === 'fast' ? 'answered without the SDK' : 'handed to the SDK').toBe(expected === 'sdk');
  return answer;
}

describe('2026-07-28 tools/call creating a task: fast path = SDK path (issue 31 item 3)', () => {
  function call(
    params: Record<string, unknown>,
    options: { token?: string; declare?: boolean; meta?: Record<string, unknown>; name?: string | null } = {},
  ): Raw {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: ACCEPT,
      'mcp-protocol-version': PROTOCOL,
      'mcp-method': 'tools/call',
    };
    const name = options.name === undefined ? params.name : options.name;
    if (typeof name === 'string') headers['mcp-name'] = name;
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': PROTOCOL,
      'io.modelcontextprotocol/clientInfo': { name: 'fast-create-test', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': options.declare === false ? {} : { extensions: { [EXT]: {} } },
    };
    return {
      body: {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { ...params, _meta: { ...envelope, ...options.meta } },
      },
      headers,
    };
  }

  it('a task tool called with the extension declared: the same CreateTaskResult, created without the SDK (S1)', async () => {
    const answer = await same(() => call({ name: 'slow_compute', arguments: { seconds: 3600 } }), 'fast');
    expect(JSON.parse(answer.body)).toMatchObject({
      result: {
        resultType: 'task',
        taskId: '<task>',
        status: 'working',
        _meta: { 'mcp-terminus.dev/submission': { created: true } },
      },
    });
    await same(() => call({ name: 'slow_compute', arguments: { seconds: 3600 } }, { token: 'alice' }), 'fast');
    await same(() => call({ name: 'failing_job' }), 'fast');
    await same(() => call({ name: 'slow_compute', arguments: { seconds: 1, extra: 'stripped' } }), 'fast');
  });

  it('S5: a submission key creates once per side, and the same key again answers the same task', async () => {
    const keyed = (s: string) =>
      call(
        { name: 'slow_compute', arguments: { seconds: 3600 } },
        { token: 'alice', meta: { [SUBMISSION_KEY]: `key-${s}` } },
      );
    await same(keyed, 'fast');
    const again = await same(keyed, 'fast');
    expect(JSON.parse(again.body)).toMatchObject({
      result: { _meta: { 'mcp-terminus.dev/submission': { created: false } } },
    });
    const conflict = (s: string) =>
      call(
        { name: 'slow_compute', arguments: { seconds: 5 } },
        { token: 'alice', meta: { [SUBMISSION_KEY]: `key-${s}` } },
      );
    const refused = await same(conflict, 'fast');
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: -32602 } });
    await same(
      () => call({ name: 'slow_compute', arguments: { seconds: 1 } }, { meta: { [SUBMISSION_KEY]: '' } }),
      'fast',
    );
    await same(
      () => call({ name: 'slow_compute', arguments: { seconds: 1 } }, { meta: { [SUBMISSION_KEY]: 'weak' } }),
      'fast',
    );
  });

  it('a webhook in _meta is stored with a task created on the fast path; a bad one is the same -32602', async () => {
    const hook = { url: 'http://127.0.0.1:9/hook', secret: SECRET, events: 'all' };
    const withHook = (meta: unknown) => () =>
      call({ name: 'slow_compute', arguments: { seconds: 3600 } }, { meta: { [WEBHOOK]: meta } });
    await same(withHook(hook), 'fast');
    const created = await send(fast.url, withHook(hook)());
    expect(created.sdk).toBe(false);
    const taskId = (JSON.parse(created.answer.body) as { result: { taskId: string } }).result.taskId;
    // Every status goes to it: the task's first status (working) is already in the outbox.
    const deliveries = await store.webhooks!.readDeliveries(null, taskId);
    expect(deliveries.map((d) => [d.seq, d.url, d.status])).toEqual([[1, hook.url, 'working']]);
    // (Not a bad secret: its message carries a random example secret, so the two sides' bytes differ.)
    for (const bad of [{ ...hook, url: 'not a url' }, { ...hook, url: 'http://10.0.0.1/' }, 'hook']) {
      const refused = await same(withHook(bad), 'fast');
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: -32602 } });
    }
  });

  it('a task tool with x-mcp-header arguments: the Mcp-Param-* header is checked before either path (SEP-2243)', async () => {
    const args = { name: 'regional_job', arguments: { region: 'eu' } };
    const missing = await send(fast.url, call(args));
    expect(missing.answer.status).toBe(400);
    expect(JSON.parse(missing.answer.body)).toMatchObject({ error: { code: -32020 } });
    expect(scrub(missing.answer)).toEqual(scrub((await send(slow.url, call(args))).answer));
    const matching = () => {
      const raw = call(args);
      return { ...raw, headers: { ...raw.headers, 'mcp-param-region': 'eu' } };
    };
    const created = await same(matching, 'fast');
    expect(JSON.parse(created.body)).toMatchObject({ result: { resultType: 'task', status: 'working' } });
  });

  it('arguments the tool refuses: the same -32602, nothing created', async () => {
    const answer = await same(() => call({ name: 'slow_compute', arguments: { seconds: 'soon' } }), 'fast');
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: -32602 } });
  });

  it('every call that does not create a task at once goes to the SDK: inline, preflight, gate, unknown, odd shapes', async () => {
    await same(() => call({ name: 'greet', arguments: { name: 'x' } }), 'sdk');
    await same(() => call({ name: 'slow_compute', arguments: { seconds: 0 } }, { declare: false }), 'sdk');
    const gated = await same(() => call({ name: 'failing_job' }, { declare: false }), 'sdk');
    expect(JSON.parse(gated.body)).toMatchObject({ error: { code: -32021 } });
    await same(() => call({ name: 'test_tool_with_task', arguments: {} }), 'sdk');
    await same(() => call({ name: 'no_such_tool' }), 'sdk');
    await same(() => call({ name: 'slow_compute', arguments: [1] }), 'sdk');
    await same(() => call({ name: 'slow_compute', arguments: { seconds: 1 } }, { name: 'greet' }), 'sdk');
    await same(() => call({ name: 'slow_compute', arguments: { seconds: 1 } }, { name: null }), 'sdk');
  });
});

describe('2025-11-25 task-augmented tools/call on a session: fast path = SDK path (issue 31 item 3)', () => {
  async function open(url: string, token?: string): Promise<string> {
    const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const init = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, ...auth },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'fast-create-test', version: '1' } },
      }),
    });
    await init.text();
    const id = init.headers.get('mcp-session-id');
    if (id === null) throw new Error(`initialize failed: ${init.status}`);
    const initialized = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: ACCEPT,
        'mcp-protocol-version': LEGACY,
        'mcp-session-id': id,
        ...auth,
      },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    await initialized.text();
    return id;
  }

  let sessions: [string, string];
  let alice: [string, string];
  beforeAll(async () => {
    sessions = [await open(fast.url), await open(slow.url)];
    alice = [await open(fast.url, 'alice'), await open(slow.url, 'alice')];
  });

  function call(session: string, params: Record<string, unknown>, token?: string): Raw {
    return {
      body: { jsonrpc: '2.0', id: 5, method: 'tools/call', params },
      headers: {
        'content-type': 'application/json',
        accept: ACCEPT,
        'mcp-protocol-version': LEGACY,
        'mcp-session-id': session,
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
    };
  }
  const on =
    (pair: [string, string], params: Record<string, unknown>, token?: string) =>
    (s: 'fast' | 'slow'): Raw =>
      call(s === 'fast' ? pair[0] : pair[1], params, token);

  it('a task-augmented call: the same CreateTaskResult event, created without the SDK (T-15, T-16, S1)', async () => {
    const answer = await same(
      on(sessions, { name: 'slow_compute', arguments: { seconds: 3600 }, task: { ttl: 60_000 } }),
      'fast',
      sessions,
    );
    expect(answer.headers['content-type']).toBe('text/event-stream');
    expect(answer.body).toContain('"task":{"taskId":"<task>","status":"working"');
    await same(on(alice, { name: 'failing_job', task: {} }, 'alice'), 'fast', alice);
    await same(
      on(sessions, {
        name: 'slow_compute',
        arguments: { seconds: 1 },
        task: { ttl: 1000 },
        _meta: { progressToken: 'p1' },
      }),
      'fast',
      sessions,
    );
  });

  it('a bad task ttl or bad arguments: the same -32602', async () => {
    await same(on(sessions, { name: 'slow_compute', arguments: { seconds: 1 }, task: { ttl: -1 } }), 'fast', sessions);
    await same(on(sessions, { name: 'slow_compute', arguments: { seconds: 'x' }, task: {} }), 'fast', sessions);
  });

  it('no task, a forbidden tool, a preflight, an unknown tool or odd shapes: to the SDK (T-10, T-13)', async () => {
    await same(on(sessions, { name: 'slow_compute', arguments: { seconds: 0 } }), 'sdk', sessions);
    await same(on(sessions, { name: 'greet', arguments: { name: 'x' }, task: {} }), 'sdk', sessions);
    await same(on(sessions, { name: 'test_tool_with_task', arguments: {}, task: {} }), 'sdk', sessions);
    await same(on(sessions, { name: 'nope', task: {} }), 'sdk', sessions);
    await same(on(sessions, { name: 'slow_compute', arguments: { seconds: 1 }, task: 5 }), 'sdk', sessions);
    await same(on(sessions, { name: 'slow_compute', arguments: 'x', task: {} }), 'sdk', sessions);
  });
});
