/**
 * The AIP-151 client adapter (google.longrunning over HTTP/JSON) against our real server in-process,
 * its failure mapping against a scripted `fetch`, and `auto` reaching it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { systemClock, systemIds } from '../../src/core/system.js';
import { connectServer, createAip151Wire } from '../../src/executor/adapters/index.js';
import type { ClientWire, TaskSnapshot } from '../../src/executor/wire-port.js';
import { WireFailure } from '../../src/executor/wire-port.js';
import { createEngine } from '../../src/runner/engine.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { aip151Wire } from '../../src/server/wire/aip-151/index.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { ALICE, BOB, Gates, startWireServer, testTools, type WireServer } from '../wires/helpers.js';
import { waitFor } from './executor-helpers.js';

let server: WireServer;
let wire: ClientWire;
let bob: ClientWire;
let keys = 0;
const key = (): string => `aip-key-${Date.now()}-${keys++}`;
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  server = await startWireServer();
  const connect = (token: string) =>
    connectServer(
      { url: server.url, headers: auth(token) },
      { clock: systemClock, wire: 'aip-151', timeoutMs: 10_000 },
    );
  wire = await connect(ALICE);
  bob = await connect(BOB);
});
afterAll(async () => {
  await wire.close();
  await bob.close();
  await server.close();
});

async function until(taskId: string, done: (s: TaskSnapshot) => boolean): Promise<TaskSnapshot> {
  let last: TaskSnapshot | undefined;
  await waitFor(async () => {
    last = await wire.getStatus(taskId);
    return done(last);
  }, `status of ${taskId}`);
  return last!;
}

async function failure(promise: Promise<unknown>): Promise<WireFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WireFailure);
  return error as WireFailure;
}

describe('AIP-151 client adapter against terminus', () => {
  test('G-19 G-20 G-21 G-28: run -> Operation; done=false is working; response is the CallToolResult', async () => {
    const answer = await wire.submit({ tool: 'work', args: { text: 'aip' }, submissionKey: key() });
    expect(answer).toMatchObject({ kind: 'task', status: 'working', pollIntervalMs: 50 });
    const taskId = answer.kind === 'task' ? answer.taskId : '';
    expect((await server.engine.get('auth:alice', taskId)).wire).toBe('aip-151');
    const done = await until(taskId, (s) => s.status === 'completed');
    expect(done.expiresAt).toBeGreaterThan(0);
    expect(await wire.fetchResult(taskId)).toEqual({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'done aip' }], structuredContent: { ok: true } },
    });
  });

  test('G-17: a failed operation gives back the original JSON-RPC error from the status details', async () => {
    const answer = await wire.submit({ tool: 'work', args: { mode: 'rpc_error' }, submissionKey: key() });
    const taskId = answer.kind === 'task' ? answer.taskId : '';
    expect((await until(taskId, (s) => s.status !== 'working')).status).toBe('failed');
    expect(await wire.fetchResult(taskId)).toEqual({
      status: 'failed',
      error: { code: -32010, message: 'backend refused', data: { backend: 'x' } },
    });
  });

  test('G-24 G-25: cancel is an empty ack; the operation then reads done with error code 1 = cancelled', async () => {
    const submissionKey = key();
    const answer = await wire.submit({ tool: 'work', args: { mode: 'block', key: submissionKey }, submissionKey });
    const taskId = answer.kind === 'task' ? answer.taskId : '';
    await expect(wire.fetchResult(taskId)).rejects.toMatchObject({ kind: 'malformed' });
    expect(await wire.cancel(taskId)).toEqual({ kind: 'acked' });
    expect((await until(taskId, (s) => s.status !== 'working')).status).toBe('cancelled');
    expect(await wire.fetchResult(taskId)).toEqual({ status: 'cancelled' });
  });

  test('G-24: cancel after completion is acked and the operation stays completed', async () => {
    const answer = await wire.submit({ tool: 'work', args: {}, submissionKey: key() });
    const taskId = answer.kind === 'task' ? answer.taskId : '';
    await until(taskId, (s) => s.status === 'completed');
    expect(await wire.cancel(taskId)).toEqual({ kind: 'acked' });
    expect((await wire.getStatus(taskId)).status).toBe('completed');
    expect((await wire.fetchResult(taskId)).status).toBe('completed');
  });

  test('404 -> not_found: unknown and foreign operations, an unknown tool', async () => {
    const answer = await wire.submit({ tool: 'work', args: {}, submissionKey: key() });
    const mine = answer.kind === 'task' ? answer.taskId : '';
    for (const [client, id] of [
      [wire, 'no-such-operation'],
      [bob, mine],
    ] as const) {
      const got = await failure(client.getStatus(id));
      expect([got.kind, got.httpStatus]).toEqual(['not_found', 404]);
      expect((await failure(client.fetchResult(id))).kind).toBe('not_found');
      expect((await failure(client.cancel(id))).kind).toBe('not_found');
    }
    expect((await failure(wire.submit({ tool: 'nope', args: {}, submissionKey: key() }))).kind).toBe('not_found');
  });

  test('AIP-155: the same requestId and body return the same operation; another body is rejected (409)', async () => {
    const submissionKey = key();
    const first = await wire.submit({ tool: 'work', args: { text: 'once' }, submissionKey });
    const again = await wire.submit({ tool: 'work', args: { text: 'once' }, submissionKey });
    expect(first.kind === 'task' && again.kind === 'task' && first.taskId === again.taskId).toBe(true);
    const other = await failure(wire.submit({ tool: 'work', args: { text: 'twice' }, submissionKey }));
    expect([other.kind, other.httpStatus]).toEqual(['rejected', 409]);
  });

  test('lookupKey through terminus/tasks/lookup on the MCP endpoint: found by requestId; unused -> never_created', async () => {
    const submissionKey = key();
    const answer = await wire.submit({ tool: 'work', args: {}, submissionKey });
    expect(await wire.lookupKey(submissionKey)).toMatchObject({
      kind: 'found',
      taskId: answer.kind === 'task' ? answer.taskId : '',
    });
    const unused = key();
    expect(await wire.lookupKey(unused)).toEqual({ kind: 'never_created' });
    const late = await failure(wire.submit({ tool: 'work', args: {}, submissionKey: unused }));
    expect([late.kind, late.httpStatus]).toEqual(['rejected', 400]);
    // Without an MCP endpoint to ask, the adapter says it cannot settle a doubt.
    const bare = createAip151Wire({ baseUrl: server.base, clock: systemClock, headers: auth(ALICE) });
    expect(await bare.lookupKey(submissionKey)).toEqual({ kind: 'unsupported' });
  });
});

describe('AIP-151 failure mapping (scripted fetch)', () => {
  const scripted = (respond: () => Response | Promise<Response>): ClientWire =>
    createAip151Wire({
      baseUrl: 'http://aip.invalid',
      clock: systemClock,
      fetch: () => Promise.resolve().then(respond),
    });
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

  test('429 and 503 are throttled with Retry-After in ms', async () => {
    const t429 = await failure(scripted(() => json(429, {}, { 'retry-after': '2' })).getStatus('x'));
    expect([t429.kind, t429.httpStatus, t429.retryAfterMs]).toEqual(['throttled', 429, 2000]);
    const t503 = await failure(scripted(() => json(503, {})).getStatus('x'));
    expect([t503.kind, t503.httpStatus, t503.retryAfterMs]).toEqual(['throttled', 503, undefined]);
  });

  test('a network error and a 500 are lost; a 400 is rejected with the ErrorInfo reason', async () => {
    const net = await failure(scripted(() => Promise.reject(new TypeError('fetch failed'))).cancel('x'));
    expect(net.kind).toBe('lost');
    expect((await failure(scripted(() => json(500, { error: {} })).getStatus('x'))).kind).toBe('lost');
    const bad = await failure(
      scripted(() =>
        json(400, { error: { code: 400, message: 'no', status: 'INVALID_ARGUMENT', details: [{ reason: 'X' }] } }),
      ).submit({ tool: 't', args: {}, submissionKey: 'k' }),
    );
    expect([bad.kind, bad.httpStatus, (bad as WireFailure & { reason?: string }).reason]).toEqual([
      'rejected',
      400,
      'X',
    ]);
  });

  test('G-20: unparsable bodies and broken Operation invariants are malformed', async () => {
    const cases: unknown[] = [
      'not json',
      { name: 'operations/x', done: true },
      { name: 'operations/x', done: false, response: { content: [] } },
      { name: 'operations/x', done: true, error: { code: 1 }, response: { content: [] } },
      { name: 'elsewhere/x', done: false },
      { name: 'operations/y', done: false },
    ];
    for (const body of cases) {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      const failed = await failure(scripted(() => new Response(text, { status: 200 })).getStatus('x'));
      expect(failed.kind).toBe('malformed');
    }
  });

  test('C13: a done Operation read for its status inlines its outcome, which the fetch is compared with', async () => {
    // Before, the snapshot dropped it: a server whose result changed between reads had its second
    // result accepted (aip-151 seeds 2 and 9 with result_changed, test/sim/regressions.test.ts).
    const result = { content: [{ type: 'text', text: 'first' }] };
    const done = { name: 'operations/x', done: true, response: { '@type': 'x', ...result } };
    const snapshot = await scripted(() => json(200, done)).getStatus('x');
    expect(snapshot).toMatchObject({ status: 'completed', outcome: { status: 'completed', result } });
    const cancelled = { name: 'operations/x', done: true, error: { code: 1, message: 'c' } };
    expect((await scripted(() => json(200, cancelled)).getStatus('x')).outcome).toEqual({ status: 'cancelled' });
    const working = await scripted(() => json(200, { name: 'operations/x', done: false })).getStatus('x');
    expect(working).not.toHaveProperty('outcome');
    // An unreadable outcome is left out: the fetch decides on it.
    const unreadable = { name: 'operations/x', done: true, response: { content: 'no' } };
    expect(await scripted(() => json(200, unreadable)).getStatus('x')).not.toHaveProperty('outcome');
  });

  test('a foreign failure without our JSON-RPC detail keeps the google.rpc code and status', async () => {
    const status = { code: 13, message: 'boom' };
    const answer = await scripted(() => json(200, { name: 'operations/x', done: true, error: status })).fetchResult(
      'x',
    );
    expect(answer).toEqual({ status: 'failed', error: { code: 13, message: 'boom', data: { rpcStatus: status } } });
  });
});

describe('auto negotiation reaching AIP-151', () => {
  test('a server with only the AIP-151 routes: auto falls through the MCP wires to aip-151', async () => {
    const store = createMemoryTaskStore();
    const engine = createEngine({
      store,
      tools: testTools(new Gates()),
      clock: systemClock,
      ids: systemIds,
      claimIntervalMs: 20,
    });
    engine.start();
    const http = await createTerminusServer({ engine, wires: [aip151Wire] }).serveHttp({ port: 0 });
    try {
      const picked = await connectServer({ url: http.url }, { clock: systemClock, timeoutMs: 10_000 });
      const skipped = await connectServer(
        { url: server.url, headers: auth(ALICE) },
        { clock: systemClock, skip: ['mcp-tasks-ext', 'mcp-2025-11-25', 'sep-1391'] },
      );
      try {
        expect(picked.wire).toBe('aip-151');
        expect(skipped.wire).toBe('aip-151');
        const answer = await picked.submit({ tool: 'work', args: {}, submissionKey: key() });
        expect(answer.kind).toBe('task');
      } finally {
        await Promise.all([picked.close(), skipped.close()]);
      }
    } finally {
      await http.close();
      await engine.stop();
      await store.close();
    }
  });
});
