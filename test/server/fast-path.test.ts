import { encodeEventCursor } from '../../src/core/event-cursor.js';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TerminusError } from '../../src/core/errors.js';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { conformancePreflights, conformanceTools } from '../../src/tools/conformance/index.js';
import { EXT, PROTOCOL } from './helpers.js';

// Issue 14 item 1: the task methods answered ahead of the SDK must answer exactly what the SDK
// answers. Every request below goes to two servers over ONE engine: `fastPath: true` and
// `fastPath: false` (each with its own wire registry, so rate limits and sessions are per side),
// and the answers are compared byte for byte: status, reason phrase, the headers a client reads,
// the body text. Each case also says whether the fast side must have answered without the SDK
// (no web `Request` built for the SDK) or must have handed the request to it.

const SUBMISSION_KEY = 'mcp-terminus.dev/submissionKey';
const UNAVAILABLE_ID = 'unavailable-task-id';

interface Side {
  readonly url: string;
  close(): Promise<void>;
}

let store: ReturnType<typeof createMemoryTaskStore>;
let engine: TaskEngine;
let fast: Side;
let slow: Side;
let limitedFast: Side;
let limitedSlow: Side;

const TOKENS: Readonly<Record<string, string>> = { alice: 'alice', bob: 'bob' };

async function authenticate(req: IncomingMessage) {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const clientId = TOKENS[header.replace(/^Bearer /, '')];
  if (clientId === undefined) throw new Error('unknown token');
  return { token: header, clientId, scopes: [] };
}

/** The engine, except that reading one id fails as a busy store does (503 + Retry-After). */
function withUnavailableId(inner: TaskEngine): TaskEngine {
  const busy = () => Promise.reject(new TerminusError('unavailable', 'store busy'));
  return {
    ...inner,
    get: (owner, id) => (id === UNAVAILABLE_ID ? busy() : inner.get(owner, id)),
    cancel: (owner, id) => (id === UNAVAILABLE_ID ? busy() : inner.cancel(owner, id)),
  };
}

async function side(fastPath: boolean, limits: { pollsPerMinute: number } | undefined): Promise<Side> {
  const registry = createWireRegistry(limits === undefined ? {} : { limits });
  const server = createTerminusServer({
    engine: registry.guard(withUnavailableId(engine)),
    wires: registry.adapters,
    preflights: conformancePreflights,
    name: 'fast-path-test',
    version: '9.9.9',
  });
  const http = await server.serveHttp({ port: 0, authenticate, fastPath, maxBodyBytes: 64 * 1024 });
  return { url: http.url, close: () => http.close() };
}

beforeAll(async () => {
  store = createMemoryTaskStore();
  // Both paths answer a request a moment apart: the adapted poll interval (a function of the
  // instant) is left out, so each tool's own interval is suggested and answers compare byte for byte.
  engine = createEngine({
    store,
    tools: conformanceTools,
    clock: systemClock,
    ids: systemIds,
    claimIntervalMs: 20,
    maxPollIntervalMs: 0,
  });
  engine.start();
  [fast, slow, limitedFast, limitedSlow] = await Promise.all([
    side(true, undefined),
    side(false, undefined),
    side(true, { pollsPerMinute: 3 }),
    side(false, { pollsPerMinute: 3 }),
  ]);
});

afterAll(async () => {
  await Promise.all([fast, slow, limitedFast, limitedSlow].map((s) => s.close()));
  await engine.stop();
  await store.close();
});

interface Raw {
  /** The body as sent: a JSON value, or text sent as is. */
  readonly body: unknown;
  readonly headers: Record<string, string>;
}

function envelope(declare = true): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': PROTOCOL,
    'io.modelcontextprotocol/clientInfo': { name: 'fast-path-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': declare ? { extensions: { [EXT]: {} } } : {},
  };
}

/** A well-formed 2026-07-28 request with its routing headers; `token` binds a principal. */
function request(
  method: string,
  params: Record<string, unknown>,
  options: { token?: string; id?: unknown; declare?: boolean; meta?: Record<string, unknown> } = {},
): Raw {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL,
    'mcp-method': method,
  };
  const name = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  if (typeof name === 'string') headers['mcp-name'] = name;
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const body = {
    jsonrpc: '2.0',
    id: 'id' in options ? options.id : 41,
    method,
    params: { ...params, _meta: { ...envelope(options.declare), ...options.meta } },
  };
  return { body, headers };
}

/** What a client reads of an answer; `Date` and the connection headers differ by nature. */
interface Answer {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const IGNORED_HEADERS = new Set(['date', 'connection', 'keep-alive']);

async function send(url: string, raw: Raw): Promise<Answer> {
  const body = typeof raw.body === 'string' ? raw.body : JSON.stringify(raw.body);
  const response = await fetch(url, { method: 'POST', headers: raw.headers, body });
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (!IGNORED_HEADERS.has(name)) headers[name] = value;
  });
  return { status: response.status, statusText: response.statusText, headers, body: await response.text() };
}

/**
 * Sends `raw` to both sides; returns both answers and how many web `Request`s the fast side built.
 * Only the SDK path builds one (the bridge hands the SDK a `Request`; the fast path answers from
 * the node request), so 0 means the fast path answered and more means the SDK did.
 */
async function both(
  raw: Raw,
  pair: readonly [Side, Side] = [fast, slow],
  rawSlow: Raw = raw,
): Promise<[Answer, Answer, number]> {
  const Original = globalThis.Request;
  let built = 0;
  globalThis.Request = class Counted extends Original {
    constructor(...args: ConstructorParameters<typeof Request>) {
      super(...args);
      built += 1;
    }
  };
  try {
    const onFast = await send(pair[0].url, raw);
    const sdkOnFast = built;
    const onSlow = await send(pair[1].url, rawSlow);
    expect(built, 'the SDK side must have served through the SDK').toBeGreaterThan(sdkOnFast);
    return [onFast, onSlow, sdkOnFast];
  } finally {
    globalThis.Request = Original;
  }
}

async function rpcResult(raw: Raw): Promise<Record<string, unknown>> {
  const answer = await send(slow.url, raw);
  const message = JSON.parse(answer.body) as { result?: Record<string, unknown> };
  if (message.result === undefined) throw new Error(`no result: ${answer.body}`);
  return message.result;
}

async function createTask(tool: string, args: Record<string, unknown>, token?: string, key?: string): Promise<string> {
  const result = await rpcResult(
    request(
      'tools/call',
      { name: tool, arguments: args },
      { ...(token === undefined ? {} : { token }), ...(key === undefined ? {} : { meta: { [SUBMISSION_KEY]: key } }) },
    ),
  );
  if (result.resultType !== 'task') throw new Error(`no task: ${JSON.stringify(result)}`);
  return result.taskId as string;
}

async function waitFor(taskId: string, status: string, token?: string): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    const result = await rpcResult(request('tasks/get', { taskId }, token === undefined ? {} : { token }));
    if (result.status === status) return;
    if (Date.now() > until) throw new Error(`task ${taskId} never ${status}: ${JSON.stringify(result)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Which side must have answered: the fast path alone (`fast`) or the SDK (`sdk`). */
type Expect = 'fast' | 'sdk';

async function same(raw: Raw, expected: Expect, pair?: readonly [Side, Side]): Promise<Answer> {
  const [onFast, onSlow, sdkOnFast] = await both(raw, pair);
  expect(onFast).toEqual(onSlow);
  if (expected === 'fast') expect(sdkOnFast, 'the fast path must answer this without the SDK').toBe(0);
  else expect(sdkOnFast, 'the fast path must hand this to the SDK').toBeGreaterThan(0);
  return onFast;
}

describe('task-method fast path = SDK path (issue 14 item 1)', () => {
  let completed: string;
  let failed: string;
  let working: string;
  let parked: string;
  let alices: string;

  beforeAll(async () => {
    completed = await createTask('slow_compute', { seconds: 0 });
    failed = await createTask('protocol_error_job', {});
    working = await createTask('slow_compute', { seconds: 3600 });
    parked = await createTask('confirm_delete', { filename: 'a.txt' });
    alices = await createTask('slow_compute', { seconds: 3600 }, 'alice', 'alice-key');
    await Promise.all([
      waitFor(completed, 'completed'),
      waitFor(failed, 'failed'),
      waitFor(parked, 'input_required'),
      waitFor(working, 'working'),
    ]);
  });

  it('tasks/get of every status: the same result, the server identity stamped, answered without the SDK', async () => {
    for (const taskId of [completed, failed, working, parked]) {
      const answer = await same(request('tasks/get', { taskId }), 'fast');
      expect(answer.status).toBe(200);
      const message = JSON.parse(answer.body) as { result: { taskId: string; _meta: Record<string, unknown> } };
      expect(message.result.taskId).toBe(taskId);
      expect(message.result._meta['io.modelcontextprotocol/serverInfo']).toEqual({
        name: 'fast-path-test',
        version: '9.9.9',
      });
    }
    await same(request('tasks/get', { taskId: completed }, { id: 'a string id' }), 'fast');
    await same(request('tasks/get', { taskId: completed, unknownField: [1, 2] }), 'fast');
    await same(request('tasks/get', { taskId: completed }, { meta: { progressToken: 5, 'x.example/k': 1 } }), 'fast');
  });

  it('unknown, foreign, malformed ids and the undeclared extension: the same errors (S8, X-44, X-47)', async () => {
    await same(request('tasks/get', { taskId: 'no-such-task' }), 'fast');
    await same(request('tasks/get', { taskId: alices }, { token: 'bob' }), 'fast');
    await same(request('tasks/get', { taskId: alices }), 'fast');
    await same(request('tasks/get', { taskId: alices }, { token: 'alice' }), 'fast');
    await same(request('tasks/get', { taskId: 'x'.repeat(300) }), 'fast');
    await same(request('tasks/get', { taskId: '' }), 'fast');
    const gated = await same(request('tasks/get', { taskId: completed }, { declare: false }), 'fast');
    expect(gated.status).toBe(400);
    expect(JSON.parse(gated.body)).toMatchObject({ error: { code: -32021 } });
    await same(request('tasks/cancel', { taskId: 'no-such-task' }), 'fast');
    await same(
      request('terminus/tasks/lookup', { submissionKey: 'alice-key' }, { token: 'bob', declare: false }),
      'fast',
    );
  });

  it('bad params go to the SDK, or get the same -32602', async () => {
    await same(request('tasks/get', {}), 'sdk');
    await same(request('tasks/get', { taskId: 7 }), 'sdk');
    await same(request('terminus/tasks/lookup', {}), 'fast');
    await same(request('terminus/tasks/lookup', { submissionKey: 7 }), 'fast');
    await same(request('terminus/tasks/lookup', { submissionKey: 'k'.repeat(300) }), 'fast');
    await same(request('tasks/update', { taskId: parked, inputResponses: { anything: { action: 'nope' } } }), 'fast');
  });

  it('a store that is unavailable: the same 503 with Retry-After', async () => {
    const answer = await same(request('tasks/get', { taskId: UNAVAILABLE_ID }), 'fast');
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('1');
    await same(request('tasks/cancel', { taskId: UNAVAILABLE_ID }), 'fast');
  });

  it('envelope and header rungs the SDK owns: wrong or missing version header, method, name, revision', async () => {
    const base = request('tasks/get', { taskId: completed });
    const headers = (change: Record<string, string | null>): Raw => {
      const next = { ...base.headers };
      for (const [k, v] of Object.entries(change)) {
        if (v === null) delete next[k];
        else next[k] = v;
      }
      return { body: base.body, headers: next };
    };
    await same(headers({ 'mcp-protocol-version': '2025-11-25' }), 'sdk');
    await same(headers({ 'mcp-protocol-version': null }), 'sdk');
    await same(headers({ 'mcp-method': null }), 'sdk');
    await same(headers({ 'mcp-method': 'tasks/cancel' }), 'sdk');
    await same(headers({ 'mcp-name': null }), 'sdk');
    await same(headers({ 'mcp-name': 'another-id' }), 'sdk');
    // The SEP-2243 base64 spelling of the same name: the SDK decodes it, the fast path leaves it.
    await same(headers({ 'mcp-name': `=?base64?${Buffer.from(completed).toString('base64')}?=` }), 'sdk');
    await same(headers({ 'mcp-name': '=?base64?not base64?=' }), 'sdk');
    await same(headers({ 'content-type': 'application/json; charset=utf-8' }), 'fast');
    await same(headers({ accept: 'text/event-stream' }), 'fast');
    await same(headers({ accept: null }), 'fast');
    const withMeta = (meta: Record<string, unknown>): Raw => ({
      body: { ...(base.body as object), params: { taskId: completed, _meta: meta } },
      headers: base.headers,
    });
    await same(withMeta({ ...envelope(), 'io.modelcontextprotocol/protocolVersion': '2027-01-01' }), 'sdk');
    await same(withMeta({ ...envelope(), 'io.modelcontextprotocol/clientCapabilities': 5 }), 'sdk');
    await same(withMeta({ 'io.modelcontextprotocol/protocolVersion': PROTOCOL }), 'sdk');
    await same(withMeta({}), 'sdk');
    // Envelopes the classifier accepts: no clientInfo, a log level, a foreign key (all lifted or kept as the SDK does).
    const { 'io.modelcontextprotocol/clientInfo': _info, ...bare } = envelope();
    await same(withMeta(bare), 'fast');
    await same(
      withMeta({ ...envelope(), 'io.modelcontextprotocol/logLevel': 'debug', 'x.example/trace': 'abc' }),
      'fast',
    );
    await same(withMeta({ ...envelope(), 'io.modelcontextprotocol/logLevel': 'loud' }), 'sdk');
  });

  it('not a single well-formed request: bad JSON, batches, notifications, responses, odd ids go to the SDK', async () => {
    const base = request('tasks/get', { taskId: completed });
    const message = base.body as Record<string, unknown>;
    await same({ body: '{"jsonrpc":"2.0",', headers: base.headers }, 'sdk');
    await same({ body: '', headers: base.headers }, 'sdk');
    const { id: _id, ...notification } = message;
    await same({ body: notification, headers: base.headers }, 'sdk');
    await same({ body: { ...message, id: null }, headers: base.headers }, 'sdk');
    await same({ body: { ...message, jsonrpc: '1.0' }, headers: base.headers }, 'sdk');
    await same({ body: { ...message, params: 'not an object' }, headers: base.headers }, 'sdk');
    await same(
      { body: { ...message, method: 'tasks/list' }, headers: { ...base.headers, 'mcp-method': 'tasks/list' } },
      'sdk',
    );
    await same({ body: { jsonrpc: '2.0', id: 41, result: {} }, headers: base.headers }, 'sdk');
    // An unknown top-level member: the SDK's JSON-RPC schema decides, so the fast path leaves it.
    await same({ body: { ...message, extra: true }, headers: base.headers }, 'sdk');
  });

  it('batches and edge refusals answer the same (the edge runs before either path)', async () => {
    const base = request('tasks/get', { taskId: completed });
    const batch = async (): Promise<void> => {
      const [onFast, onSlow] = await Promise.all([
        send(fast.url, { body: [base.body], headers: base.headers }),
        send(slow.url, { body: [base.body], headers: base.headers }),
      ]);
      expect(onFast).toEqual(onSlow);
      expect(onFast.status).toBe(400);
    };
    await batch();
    for (const headers of [
      { ...base.headers, 'content-type': 'text/plain' },
      { ...base.headers, accept: 'text/html' },
      { ...base.headers, authorization: 'Bearer mallory' },
    ]) {
      const [onFast, onSlow] = await Promise.all([
        send(fast.url, { body: base.body, headers }),
        send(slow.url, { body: base.body, headers }),
      ]);
      expect(onFast).toEqual(onSlow);
      expect(onFast.status).toBeGreaterThanOrEqual(400);
    }
    const big = {
      ...(base.body as object),
      params: { taskId: completed, pad: 'x'.repeat(70 * 1024), _meta: envelope() },
    };
    const [onFast, onSlow] = await Promise.all([
      send(fast.url, { body: big, headers: base.headers }),
      send(slow.url, { body: big, headers: base.headers }),
    ]);
    expect(onFast).toEqual(onSlow);
    expect(onFast.status).toBe(413);
  });

  it('tasks/cancel and tasks/update change the task the same way on either path', async () => {
    // One task per side: a cancel or an answer happens once.
    const [a, b] = [
      await createTask('slow_compute', { seconds: 3600 }),
      await createTask('slow_compute', { seconds: 3600 }),
    ];
    await Promise.all([waitFor(a, 'working'), waitFor(b, 'working')]);
    const [onFast, onSlow] = [
      await send(fast.url, request('tasks/cancel', { taskId: a })),
      await send(slow.url, request('tasks/cancel', { taskId: b })),
    ];
    expect(onFast).toEqual(onSlow);
    await Promise.all([waitFor(a, 'cancelled'), waitFor(b, 'cancelled')]);
    await same(request('tasks/cancel', { taskId: a }), 'fast');
    await same(request('tasks/get', { taskId: a }), 'fast');

    const [p, q] = [
      await createTask('confirm_delete', { filename: 'same' }),
      await createTask('confirm_delete', { filename: 'same' }),
    ];
    await Promise.all([waitFor(p, 'input_required'), waitFor(q, 'input_required')]);
    const keyOf = async (taskId: string): Promise<string> =>
      Object.keys((await rpcResult(request('tasks/get', { taskId }))).inputRequests as object)[0] as string;
    const reply = { action: 'accept', content: { confirm: true } };
    const wrapped = { method: 'elicitation/create', result: reply };
    // A wrapped { method, result } entry is dropped by both (the SDK's partition); the task stays parked.
    const [w1, w2] = [
      await send(fast.url, request('tasks/update', { taskId: p, inputResponses: { [await keyOf(p)]: wrapped } })),
      await send(slow.url, request('tasks/update', { taskId: q, inputResponses: { [await keyOf(q)]: wrapped } })),
    ];
    expect(w1).toEqual(w2);
    const [u1, u2] = [
      await send(
        fast.url,
        request('tasks/update', { taskId: p, inputResponses: { [await keyOf(p)]: reply }, requestState: 'opaque' }),
      ),
      await send(
        slow.url,
        request('tasks/update', { taskId: q, inputResponses: { [await keyOf(q)]: reply }, requestState: 'opaque' }),
      ),
    ];
    expect(u1).toEqual(u2);
    await Promise.all([waitFor(p, 'completed'), waitFor(q, 'completed')]);
    const [g1, g2] = [
      await send(fast.url, request('tasks/get', { taskId: p })),
      await send(slow.url, request('tasks/get', { taskId: q })),
    ];
    const scrub = (answer: Answer, id: string): unknown => {
      // The events cursor carries a tag of the task id: the id's, scrubbed as the id is.
      const body = answer.body.replaceAll(id, '<id>').replaceAll(cursorTag(id), '<tag>');
      const message = JSON.parse(body) as { result: Record<string, unknown> };
      const { createdAt: _c, lastUpdatedAt: _u, ...rest } = message.result;
      return {
        ...answer,
        body: undefined,
        result: rest,
      };
    };
    expect(scrub(g1, p)).toEqual(scrub(g2, q));
    expect(JSON.parse(g1.body)).toMatchObject({
      result: { status: 'completed', result: { content: [{ text: 'Deleted same' }] } },
    });
    await same(request('tasks/update', { taskId: p }), 'fast');
  });

  it('terminus/tasks/lookup: found, foreign, never created (the key burned once per side)', async () => {
    await same(request('terminus/tasks/lookup', { submissionKey: 'alice-key' }, { token: 'alice' }), 'fast');
    await same(request('terminus/tasks/lookup', { submissionKey: 'alice-key' }, { token: 'bob' }), 'fast');
    const [n1, n2] = [
      await send(fast.url, request('terminus/tasks/lookup', { submissionKey: 'unused-on-fast' }, { token: 'alice' })),
      await send(slow.url, request('terminus/tasks/lookup', { submissionKey: 'unused-on-slow' }, { token: 'alice' })),
    ];
    expect(n1).toEqual(n2);
    expect(JSON.parse(n1.body)).toMatchObject({ result: { found: false, neverCreated: true } });
    // An unauthenticated caller's weak key: the same -32602 with its bits (anonymousCapabilities).
    await same(request('terminus/tasks/lookup', { submissionKey: 'weak' }), 'fast');
  });

  it('rate limits run before either path: the same 429s in the same places (T-78)', async () => {
    const raw = request('tasks/get', { taskId: completed });
    const answers: [number, number][] = [];
    for (let i = 0; i < 5; i += 1) {
      const [onFast, onSlow] = [await send(limitedFast.url, raw), await send(limitedSlow.url, raw)];
      const strip = (a: Answer) => ({
        ...a,
        headers: { ...a.headers, 'retry-after': undefined },
        body: a.body.replace(/\d+ ms/, 'N ms').replace(/"retryAfterMs":\d+/, ''),
      });
      expect(strip(onFast)).toEqual(strip(onSlow));
      answers.push([onFast.status, onSlow.status]);
    }
    expect(answers.map(([s]) => s)).toEqual([200, 200, 200, 429, 429]);
  });
});

// The 2025-11-25 wire is sessionful over HTTP: each side has its own sessions (its own legs), so
// each request is sent on the side's own session and the answers are compared with each side's
// session id written as <session> (it is the Mcp-Session-Id header and, unauthenticated, the owner).
describe('2025-11-25 tasks/get and tasks/cancel on a session: fast path = SDK path (issue 14 item 1)', () => {
  const LEGACY = '2025-11-25';
  const ACCEPT = 'application/json, text/event-stream';

  interface Session {
    readonly side: Side;
    readonly id: string;
    readonly token: string | undefined;
  }
  /** One session per side for each caller: [fast, slow]. */
  type Pair = readonly [Session, Session];

  function sessionHeaders(session: Session): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: ACCEPT,
      'mcp-protocol-version': LEGACY,
      'mcp-session-id': session.id,
      ...(session.token === undefined ? {} : { authorization: `Bearer ${session.token}` }),
    };
  }

  async function open(side: Side, token?: string): Promise<Session> {
    const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const init = await fetch(side.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, ...auth },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'fast-path-test', version: '1' } },
      }),
    });
    await init.text();
    const id = init.headers.get('mcp-session-id');
    if (init.status !== 200 || id === null) throw new Error(`initialize failed: ${init.status}`);
    const session = { side, id, token };
    const initialized = await fetch(side.url, {
      method: 'POST',
      headers: sessionHeaders(session),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    await initialized.text();
    return session;
  }

  async function pair(token?: string): Promise<Pair> {
    return [await open(fast, token), await open(slow, token)];
  }

  /** A 2025-11-25 request on `session`; `change` edits the headers (null removes one). */
  function legacyRequest(
    session: Session,
    method: string,
    params: unknown,
    options: { id?: unknown; change?: Record<string, string | null> } = {},
  ): Raw {
    const headers = sessionHeaders(session);
    for (const [k, v] of Object.entries(options.change ?? {})) {
      if (v === null) delete headers[k];
      else headers[k] = v;
    }
    const body: Record<string, unknown> = { jsonrpc: '2.0', id: 'id' in options ? options.id : 7, method };
    if (params !== undefined) body.params = params;
    return { body, headers };
  }

  function scrub(answer: Answer, session: Session): Answer {
    const headers = { ...answer.headers };
    if (headers['mcp-session-id'] === session.id) headers['mcp-session-id'] = '<session>';
    return { ...answer, headers, body: answer.body.replaceAll(session.id, '<session>') };
  }

  /** Sends `build(session)` on each side's own session; the answers must match but for the session id. */
  async function sameOn(sessions: Pair, build: (s: Session) => Raw, expected: Expect): Promise<Answer> {
    const [onFast, onSlow, sdkOnFast] = await both(build(sessions[0]), [fast, slow], build(sessions[1]));
    const answer = scrub(onFast, sessions[0]);
    expect(answer).toEqual(scrub(onSlow, sessions[1]));
    if (expected === 'fast') expect(sdkOnFast, 'the fast path must answer this without the SDK').toBe(0);
    else expect(sdkOnFast, 'the fast path must hand this to the SDK').toBeGreaterThan(0);
    return answer;
  }

  function events(answer: Answer): Record<string, unknown>[] {
    return [...answer.body.matchAll(/^data: (.*)$/gm)].map(
      (m) => JSON.parse(m[1] as string) as Record<string, unknown>,
    );
  }

  async function call(
    session: Session,
    method: string,
    params: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const answer = await send(session.side.url, legacyRequest(session, method, params));
    const message = events(answer)[0] as { result?: Record<string, unknown> } | undefined;
    if (message?.result === undefined) throw new Error(`no result: ${answer.status} ${answer.body}`);
    return message.result;
  }

  async function createLegacyTask(session: Session, tool: string, args: Record<string, unknown>): Promise<string> {
    const result = await call(session, 'tools/call', { name: tool, arguments: args, task: { ttl: 600_000 } });
    return (result.task as { taskId: string }).taskId;
  }

  async function waitLegacy(session: Session, taskId: string, status: string): Promise<void> {
    const until = Date.now() + 10_000;
    for (;;) {
      const result = await call(session, 'tasks/get', { taskId });
      if (result.status === status) return;
      if (Date.now() > until) throw new Error(`task ${taskId} never ${status}: ${JSON.stringify(result)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  let alice: Pair;
  let bob: Pair;
  let anonymous: Pair;
  let completed: string;
  let failed: string;
  let working: string;
  let parked: string;

  beforeAll(async () => {
    [alice, bob, anonymous] = [await pair('alice'), await pair('bob'), await pair()];
    // Owned by auth:alice: the same task is alice's on either side.
    const [a] = alice;
    completed = await createLegacyTask(a, 'slow_compute', { seconds: 0 });
    failed = await createLegacyTask(a, 'protocol_error_job', {});
    working = await createLegacyTask(a, 'slow_compute', { seconds: 3600 });
    parked = await createLegacyTask(a, 'confirm_delete', { filename: 'b.txt' });
    await Promise.all([
      waitLegacy(a, completed, 'completed'),
      waitLegacy(a, failed, 'failed'),
      waitLegacy(a, working, 'working'),
      waitLegacy(a, parked, 'input_required'),
    ]);
  });

  it('tasks/get of every status, any id type the schema takes, unknown params: answered fast, the same SSE event (T-25, T-44)', async () => {
    for (const taskId of [completed, failed, working, parked]) {
      const answer = await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', { taskId }), 'fast');
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('text/event-stream');
      expect(answer.headers['mcp-session-id']).toBe('<session>');
      expect(events(answer)).toMatchObject([{ jsonrpc: '2.0', id: 7, result: { taskId } }]);
    }
    await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', { taskId: completed }, { id: 'a string id' }), 'fast');
    await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', { taskId: completed }, { id: 0 }), 'fast');
    await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', { taskId: completed, unknownField: [1, 2] }), 'fast');
    await sameOn(
      alice,
      (s) =>
        legacyRequest(s, 'tasks/get', {
          taskId: completed,
          _meta: { progressToken: 5, 'io.modelcontextprotocol/related-task': { taskId: 'other' } },
        }),
      'fast',
    );
    await sameOn(
      alice,
      (s) =>
        legacyRequest(
          s,
          'tasks/get',
          { taskId: completed },
          { change: { 'content-type': 'application/json; charset=utf-8' } },
        ),
      'fast',
    );
  });

  it('unknown, foreign, malformed ids and bad params: the same -32602 (S8, T-68, T-73)', async () => {
    for (const params of [
      { taskId: 'no-such-task' },
      { taskId: '' },
      { taskId: 'x'.repeat(300) },
      {},
      { taskId: 7 },
      { taskId: null },
    ]) {
      const answer = await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', params), 'fast');
      expect(events(answer)).toMatchObject([{ error: { code: -32602 } }]);
      await sameOn(alice, (s) => legacyRequest(s, 'tasks/cancel', params), 'fast');
    }
    await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', undefined), 'fast');
    // Another principal's task, and an unauthenticated session's view of it: "not found", as unknown.
    for (const other of [bob, anonymous]) {
      const answer = await sameOn(other, (s) => legacyRequest(s, 'tasks/get', { taskId: working }), 'fast');
      expect(events(answer)).toMatchObject([{ error: { code: -32602, data: { reason: 'task_not_found' } } }]);
      await sameOn(other, (s) => legacyRequest(s, 'tasks/cancel', { taskId: working }), 'fast');
    }
    // Params that are not an object, and ids the JSON-RPC schema refuses or we leave to it.
    await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', 'not an object'), 'sdk');
    await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', [completed]), 'sdk');
    for (const id of [null, true, { n: 1 }, 1.5]) {
      await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', { taskId: completed }, { id }), 'sdk');
    }
  });

  it("a session-owned task: the session's own scope, on either path", async () => {
    const tasks = [
      await createLegacyTask(anonymous[0], 'slow_compute', { seconds: 0 }),
      await createLegacyTask(anonymous[1], 'slow_compute', { seconds: 0 }),
    ] as const;
    await Promise.all([
      waitLegacy(anonymous[0], tasks[0], 'completed'),
      waitLegacy(anonymous[1], tasks[1], 'completed'),
    ]);
    const [onFast, onSlow, sdkOnFast] = await both(
      legacyRequest(anonymous[0], 'tasks/get', { taskId: tasks[0] }),
      [fast, slow],
      legacyRequest(anonymous[1], 'tasks/get', { taskId: tasks[1] }),
    );
    expect(sdkOnFast).toBe(0);
    const strip = (answer: Answer, session: Session, taskId: string): unknown => {
      const scrubbed = scrub(answer, session);
      const body = scrubbed.body.replaceAll(taskId, '<task>').replaceAll(cursorTag(taskId), '<tag>');
      const [message] = events({ ...scrubbed, body }) as [{ result: Record<string, unknown> }];
      const { createdAt: _c, lastUpdatedAt: _u, ...rest } = message.result;
      return { ...scrubbed, body: undefined, result: rest };
    };
    expect(strip(onFast, anonymous[0], tasks[0])).toEqual(strip(onSlow, anonymous[1], tasks[1]));
    // Another unauthenticated session, and alice, cannot see it (the owner is the session).
    const [other] = await pair();
    await sameOn([other, anonymous[1]], (s) => legacyRequest(s, 'tasks/get', { taskId: tasks[0] }), 'fast');
    await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', { taskId: tasks[1] }), 'fast');
  });

  it('tasks/cancel: a live task is cancelled the same way; a terminal one gets the same -32602 (T-62, T-64)', async () => {
    const [a, b] = [
      await createLegacyTask(alice[0], 'slow_compute', { seconds: 3600 }),
      await createLegacyTask(alice[0], 'slow_compute', { seconds: 3600 }),
    ];
    await Promise.all([waitLegacy(alice[0], a, 'working'), waitLegacy(alice[0], b, 'working')]);
    const [onFast, onSlow, sdkOnFast] = await both(
      legacyRequest(alice[0], 'tasks/cancel', { taskId: a }),
      [fast, slow],
      legacyRequest(alice[1], 'tasks/cancel', { taskId: b }),
    );
    expect(sdkOnFast).toBe(0);
    const norm = (answer: Answer, session: Session, taskId: string): unknown => {
      const scrubbed = scrub(answer, session);
      const [message] = events({ ...scrubbed, body: scrubbed.body.replaceAll(taskId, '<task>') }) as [
        { result: Record<string, unknown> },
      ];
      const { createdAt: _c, lastUpdatedAt: _u, ...rest } = message.result;
      return { ...scrubbed, body: undefined, result: rest };
    };
    expect(norm(onFast, alice[0], a)).toEqual(norm(onSlow, alice[1], b));
    expect(events(onFast)).toMatchObject([{ result: { status: 'cancelled' } }]);
    for (const taskId of [a, completed, failed]) {
      const answer = await sameOn(alice, (s) => legacyRequest(s, 'tasks/cancel', { taskId }), 'fast');
      expect(events(answer)).toMatchObject([{ error: { code: -32602, data: { reason: 'already_terminal' } } }]);
    }
  });

  it('a store that is unavailable: the same 503 with Retry-After and the same SSE event', async () => {
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const answer = await sameOn(alice, (s) => legacyRequest(s, method, { taskId: UNAVAILABLE_ID }), 'fast');
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
    }
  });

  it('session and header rungs the SDK owns: unknown, missing, foreign session, version, Accept', async () => {
    const get = (s: Session, change: Record<string, string | null>): Raw =>
      legacyRequest(s, 'tasks/get', { taskId: completed }, { change });
    const unknown = await sameOn(alice, (s) => get(s, { 'mcp-session-id': 'no-such-session' }), 'sdk');
    expect(unknown.status).toBe(404);
    await sameOn(alice, (s) => get(s, { 'mcp-session-id': '' }), 'sdk');
    // No session header: the SDK's stateless leg answers it.
    await sameOn(alice, (s) => get(s, { 'mcp-session-id': null }), 'sdk');
    // Alice's session named by bob, and by an anonymous caller: 404, as for an unknown one.
    const foreign = await sameOn(alice, (s) => get(s, { authorization: 'Bearer bob' }), 'sdk');
    expect(foreign.status).toBe(404);
    await sameOn(alice, (s) => get(s, { authorization: null }), 'sdk');
    // A session that was ended (DELETE): 404.
    const ended = await pair('alice');
    for (const s of ended) {
      const deleted = await fetch(s.side.url, { method: 'DELETE', headers: sessionHeaders(s) });
      expect(deleted.status).toBe(200);
    }
    expect((await sameOn(ended, (s) => get(s, {}), 'sdk')).status).toBe(404);
    const wrong = await sameOn(alice, (s) => get(s, { 'mcp-protocol-version': '2024-01-01' }), 'sdk');
    expect(wrong.status).toBe(400);
    await sameOn(alice, (s) => get(s, { 'mcp-protocol-version': '2026-07-28' }), 'sdk');
    await sameOn(alice, (s) => get(s, { 'mcp-protocol-version': '2025-06-18' }), 'sdk');
    await sameOn(alice, (s) => get(s, { 'mcp-protocol-version': null }), 'sdk');
    expect((await sameOn(alice, (s) => get(s, { accept: 'application/json' }), 'sdk')).status).toBe(406);
    await sameOn(alice, (s) => get(s, { accept: 'text/event-stream' }), 'sdk');
  });

  it('an id still in flight on the session (a blocking tasks/result) goes to the SDK, a free one is fast again', async () => {
    const held = alice.map((s) => {
      const abort = new AbortController();
      const raw = legacyRequest(s, 'tasks/result', { taskId: working }, { id: 99 });
      // Resolves once the SDK has dispatched it (the 200 stream's headers are out); it never ends.
      const response = fetch(s.side.url, {
        method: 'POST',
        headers: raw.headers,
        body: JSON.stringify(raw.body),
        signal: abort.signal,
      });
      return { abort, response };
    });
    try {
      for (const { response } of held) expect((await response).status).toBe(200);
      await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', { taskId: completed }, { id: 99 }), 'sdk');
      await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', { taskId: completed }, { id: 100 }), 'fast');
    } finally {
      for (const { abort } of held) abort.abort();
    }
    // The SDK answered that tasks/get on its own stream: the id is free again afterwards.
    await sameOn(alice, (s) => legacyRequest(s, 'tasks/get', { taskId: completed }, { id: 7 }), 'fast');
  });

  it('not one ordinary request: notifications, responses, batches, extra members, initialize go to the SDK', async () => {
    const base = (s: Session): Record<string, unknown> =>
      legacyRequest(s, 'tasks/get', { taskId: completed }).body as Record<string, unknown>;
    const on = (s: Session, body: unknown): Raw => ({ body, headers: sessionHeaders(s) });
    const notification = await sameOn(
      alice,
      (s) => {
        const { id: _id, ...rest } = base(s);
        return on(s, rest);
      },
      'sdk',
    );
    expect(notification.status).toBe(202);
    await sameOn(alice, (s) => on(s, { jsonrpc: '2.0', id: 7, result: {} }), 'sdk');
    await sameOn(alice, (s) => on(s, { ...base(s), extra: true }), 'sdk');
    await sameOn(alice, (s) => on(s, { ...base(s), jsonrpc: '1.0' }), 'sdk');
    await sameOn(alice, (s) => on(s, { ...base(s), method: 'tasks/list' }), 'sdk');
    await sameOn(alice, (s) => on(s, { ...base(s), method: 'tasks/result', params: { taskId: completed } }), 'sdk');
    await sameOn(alice, (s) => on(s, '{"jsonrpc":"2.0",'), 'sdk');
    // Batches are refused at the endpoint before either path (400 on both).
    const batch = await sameOn(alice, (s) => on(s, [base(s)]), 'sdk');
    expect(batch.status).toBe(400);
  });
});

/** The part of an events cursor derived from the task id (`<seq>.<tag>`). */
function cursorTag(taskId: string): string {
  return encodeEventCursor(taskId, 0).slice(2);
}
