/**
 * The SEP-1391 client adapter (`tools/async/*`) against our real server in-process (every wire
 * registered, bearer auth), and `auto` negotiation reaching it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import type { ClientWire, TaskSnapshot } from '../../src/executor/wire-port.js';
import { WireFailure } from '../../src/executor/wire-port.js';
import { ALICE, BOB, startWireServer, type WireServer } from '../wires/helpers.js';
import { waitFor } from './executor-helpers.js';

let server: WireServer;
let wire: ClientWire;
let bob: ClientWire;
let keys = 0;
const key = (): string => `sep-key-${Date.now()}-${keys++}`;

beforeAll(async () => {
  server = await startWireServer();
  const connect = (token: string) =>
    connectServer(
      { url: server.url, headers: { authorization: `Bearer ${token}` } },
      { clock: systemClock, wire: 'sep-1391', timeoutMs: 10_000 },
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

describe('SEP-1391 client adapter', () => {
  test('L-08 L-09 L-10 L-11: the token is our submission key; status then the wrapped result', async () => {
    const submissionKey = key();
    const answer = await wire.submit({ tool: 'work', args: { text: 'sep' }, submissionKey });
    // pollFrequency is seconds (our server sends 0.1 for the tool's 50 ms, rounded to tenths).
    expect(answer).toMatchObject({ kind: 'task', taskId: submissionKey, status: 'working', pollIntervalMs: 100 });
    const done = await until(submissionKey, (s) => s.status === 'completed');
    expect(done).toEqual({ taskId: submissionKey, status: 'completed' });
    expect(await wire.fetchResult(submissionKey)).toEqual({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'done sep' }], structuredContent: { ok: true } },
    });
    expect(wire.wire).toBe('sep-1391');
  });

  test('L-11: a failed operation reports its message; the result is a failed answer carrying it', async () => {
    const submissionKey = key();
    await wire.submit({ tool: 'work', args: { mode: 'rpc_error' }, submissionKey });
    const failed = await until(submissionKey, (s) => s.status !== 'working');
    expect(failed).toEqual({ taskId: submissionKey, status: 'failed', statusMessage: 'backend refused' });
    expect(await wire.fetchResult(submissionKey)).toEqual({
      status: 'failed',
      error: { code: -32603, message: 'backend refused' },
    });
  });

  test('a tool error (isError) is a completed operation whose result says so', async () => {
    const submissionKey = key();
    await wire.submit({ tool: 'work', args: { mode: 'tool_error' }, submissionKey });
    await until(submissionKey, (s) => s.status === 'completed');
    expect(await wire.fetchResult(submissionKey)).toEqual({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'tool says no' }], isError: true },
    });
  });

  test('L-15 L-16: cancel while working is acked cancelled; status and result then read cancelled', async () => {
    const submissionKey = key();
    await wire.submit({ tool: 'work', args: { mode: 'block', key: submissionKey }, submissionKey });
    await expect(wire.fetchResult(submissionKey)).rejects.toMatchObject({ kind: 'malformed' });
    expect(await wire.cancel(submissionKey)).toEqual({ kind: 'acked', status: 'cancelled' });
    expect(await wire.getStatus(submissionKey)).toEqual({ taskId: submissionKey, status: 'cancelled' });
    expect(await wire.fetchResult(submissionKey)).toEqual({ status: 'cancelled' });
    expect(await wire.cancel(submissionKey)).toEqual({ kind: 'acked', status: 'cancelled' });
  });

  test('L-19: cancel after completion is already_terminal and the operation stays completed', async () => {
    const submissionKey = key();
    await wire.submit({ tool: 'work', args: {}, submissionKey });
    await until(submissionKey, (s) => s.status === 'completed');
    expect(await wire.cancel(submissionKey)).toEqual({ kind: 'already_terminal', status: 'completed' });
    expect((await wire.fetchResult(submissionKey)).status).toBe('completed');
  });

  test('L-13: unknown and foreign tokens are not_found on status, result and cancel', async () => {
    const mine = key();
    await wire.submit({ tool: 'work', args: {}, submissionKey: mine });
    for (const [client, token] of [
      [wire, 'no-such-token'],
      [bob, mine],
    ] as const) {
      expect((await failure(client.getStatus(token))).kind).toBe('not_found');
      expect((await failure(client.fetchResult(token))).kind).toBe('not_found');
      expect((await failure(client.cancel(token))).kind).toBe('not_found');
    }
  });

  test('S5: resending the same token and call is the same operation; another call under it is rejected', async () => {
    const submissionKey = key();
    const first = await wire.submit({ tool: 'work', args: { text: 'once' }, submissionKey });
    const again = await wire.submit({ tool: 'work', args: { text: 'once' }, submissionKey });
    expect(again.kind === 'task' && first.kind === 'task' && again.taskId === first.taskId).toBe(true);
    const other = await failure(wire.submit({ tool: 'work', args: { text: 'twice' }, submissionKey }));
    expect([other.kind, other.rpcCode]).toEqual(['rejected', -32602]);
    const found = await server.engine.lookupKey('auth:alice', submissionKey);
    expect(found.kind).toBe('found');
  });

  test('S6: lookupKey finds a submitted key; an unused key is never_created and then burned for submits', async () => {
    const used = key();
    await wire.submit({ tool: 'work', args: {}, submissionKey: used });
    expect(await wire.lookupKey(used)).toMatchObject({ kind: 'found', taskId: used });
    const unused = key();
    expect(await wire.lookupKey(unused)).toEqual({ kind: 'never_created' });
    const late = await failure(wire.submit({ tool: 'work', args: {}, submissionKey: unused }));
    expect([late.kind, late.rpcCode]).toEqual(['rejected', -32602]);
  });

  test('input rounds are refused as rejected, not sent', async () => {
    expect((await failure(wire.sendInput('x', { a: 1 }))).kind).toBe('rejected');
  });
});

describe('auto negotiation with SEP-1391', () => {
  test('auto prefers the Tasks extension; skipping it and 2025-11-25 finds sep-1391 through tools/list', async () => {
    const target = { url: server.url, headers: { authorization: `Bearer ${ALICE}` } };
    const best = await connectServer(target, { clock: systemClock });
    const sep = await connectServer(target, { clock: systemClock, skip: ['mcp-tasks-ext', 'mcp-2025-11-25'] });
    try {
      expect(best.wire).toBe('mcp-tasks-ext');
      expect(sep.wire).toBe('sep-1391');
    } finally {
      await Promise.all([best.close(), sep.close()]);
    }
  });
});
