/**
 * The bookkeeping of the 2025-11-25 input side channel (`side-channel.ts`) and its use by the
 * adapter, on a scripted channel: which server requests are taken, how they are keyed, that a key is
 * answered once, and that the blocked `tasks/result` answer only serves the next fetch and stands as
 * the task's first terminal report (C13: a later status or cancel answer never overrides it).
 */
import { describe, expect, it } from 'vitest';
import type { ServerRequestHandler, ServerRequestReply } from '../../src/executor/adapters/connection.js';
import { createRev20251125Wire } from '../../src/executor/adapters/rev2025-11-25/index.js';
import { SideChannel } from '../../src/executor/adapters/rev2025-11-25/side-channel.js';
import { RpcErrorFailure } from '../../src/executor/adapters/rpc-error.js';
import type { RpcChannel } from '../../src/executor/wire-port.js';

const TAG = 'io.modelcontextprotocol/related-task';

interface Call {
  readonly method: string;
  readonly params: Record<string, unknown>;
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
}

/** `tasks/result` calls stay open until the test settles them; `tasks/get` answers `status`. */
function scripted(status: () => string) {
  const calls: Call[] = [];
  const channel: RpcChannel = (method, params) => {
    if (method === 'tasks/get') {
      const t = '2026-01-01T00:00:00Z';
      return Promise.resolve({ taskId: params.taskId, status: status(), createdAt: t, lastUpdatedAt: t, ttl: null });
    }
    return new Promise((resolve, reject) => calls.push({ method, params, resolve, reject }));
  };
  return { channel, calls };
}

function replies() {
  const written: { id: string | number; value: Record<string, unknown> }[] = [];
  let failNext = false;
  const reply = (id: string | number): ServerRequestReply => ({
    result: async (value) => {
      if (failNext) {
        failNext = false;
        throw new Error('pipe closed');
      }
      written.push({ id, value });
    },
    error: async () => undefined,
  });
  return { written, reply, failOnce: () => (failNext = true) };
}

const elicit = (taskId: string | undefined, extra: Record<string, unknown> = {}) => ({
  message: 'Which one?',
  requestedSchema: { type: 'object', properties: {} },
  ...(taskId === undefined ? {} : { _meta: { [TAG]: { taskId }, ...extra } }),
});

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('SideChannel bookkeeping', () => {
  it('takes only task-tagged elicitation/sampling requests, keyed by JSON-RPC id, without the tag', () => {
    const side = new SideChannel(scripted(() => 'working').channel);
    const { reply } = replies();
    expect(side.accept({ id: 1, method: 'elicitation/create', params: elicit(undefined) }, reply(1))).toBe(false);
    expect(side.accept({ id: 2, method: 'roots/list', params: elicit('t1') }, reply(2))).toBe(false);
    expect(side.accept({ id: 3, method: 'elicitation/create', params: elicit('t1', { other: 1 }) }, reply(3))).toBe(
      true,
    );
    expect(side.accept({ id: 'x', method: 'sampling/createMessage', params: elicit('t1') }, reply('x'))).toBe(true);
    expect(side.requests('t1')).toEqual({
      '3': {
        method: 'elicitation/create',
        params: { message: 'Which one?', requestedSchema: { type: 'object', properties: {} }, _meta: { other: 1 } },
      },
      x: { method: 'sampling/createMessage', params: { message: 'Which one?', requestedSchema: expect.anything() } },
    });
    expect(side.requests('t2')).toBeUndefined();
  });

  it('answers a key once, tagged with the task; replays, unknown keys and concurrent resends write nothing more', async () => {
    const side = new SideChannel(scripted(() => 'working').channel);
    const { reply, written } = replies();
    side.accept({ id: 7, method: 'elicitation/create', params: elicit('t1') }, reply(7));
    const answer = { action: 'accept', content: { pick: 'a' } };
    await Promise.all([side.answer('t1', { '7': answer }), side.answer('t1', { '7': answer })]);
    await side.answer('t1', { '7': { action: 'decline' } });
    await side.answer('t1', { '99': answer });
    await side.answer('t-unknown', { '7': answer });
    expect(written).toEqual([{ id: 7, value: { ...answer, _meta: { [TAG]: { taskId: 't1' } } } }]);
    expect(side.requests('t1')).toBeUndefined();
    // The same id delivered again after its answer is not asked again.
    side.accept({ id: 7, method: 'elicitation/create', params: elicit('t1') }, reply(7));
    expect(side.requests('t1')).toBeUndefined();
  });

  it('a failed write leaves the key pending and the retry writes it', async () => {
    const side = new SideChannel(scripted(() => 'working').channel);
    const { reply, written, failOnce } = replies();
    side.accept({ id: 1, method: 'elicitation/create', params: elicit('t1') }, reply(1));
    failOnce();
    await expect(side.answer('t1', { '1': { action: 'cancel' } })).rejects.toThrow('pipe closed');
    expect(Object.keys(side.requests('t1') ?? {})).toEqual(['1']);
    await side.answer('t1', { '1': { action: 'cancel' } });
    expect(written).toHaveLength(1);
  });

  it('keeps one tasks/result open; its success is kept once, an error answer is not kept and the next open asks again', async () => {
    const { channel, calls } = scripted(() => 'input_required');
    const side = new SideChannel(channel);
    side.open('t1');
    side.open('t1');
    expect(calls.map((c) => c.method)).toEqual(['tasks/result']);
    calls[0]!.reject(new RpcErrorFailure(-32603, 'transient', undefined));
    await flush();
    expect(side.takeFinal('t1')).toBeUndefined();
    side.open('t1');
    expect(calls).toHaveLength(2);
    const result = { content: [{ type: 'text', text: 'done' }], _meta: { [TAG]: { taskId: 't1' } } };
    calls[1]!.resolve(result);
    await flush();
    side.open('t1');
    expect(calls).toHaveLength(2);
    expect(side.takeFinal('t1')).toEqual(result);
    expect(side.takeFinal('t1')).toBeUndefined();
  });
});

describe('rev2025-11-25 adapter with a request hook', () => {
  it('input_required opens tasks/result, reports its requests, answers them, and the kept answer serves the fetch', async () => {
    let status = 'input_required';
    const { channel, calls } = scripted(() => status);
    let handler: ServerRequestHandler | undefined;
    const wire = createRev20251125Wire({
      channel,
      onRequest: (h) => {
        handler = h;
        return () => (handler = undefined);
      },
    });
    const { reply, written } = replies();
    expect((await wire.getStatus('t1')).inputRequests).toBeUndefined();
    expect(calls.map((c) => c.method)).toEqual(['tasks/result']);
    expect(handler!({ id: 4, method: 'elicitation/create', params: elicit('t1') }, reply(4))).toBe(true);
    const snapshot = await wire.getStatus('t1');
    expect(snapshot).toMatchObject({
      status: 'input_required',
      inputRequests: { '4': { method: 'elicitation/create' } },
    });
    await wire.sendInput('t1', { '4': { action: 'accept', content: {} } });
    await wire.sendInput('t1', { '4': { action: 'accept', content: {} } });
    expect(written).toHaveLength(1);
    status = 'completed';
    calls[0]!.resolve({ content: [{ type: 'text', text: 'ok' }], _meta: { [TAG]: { taskId: 't1' } } });
    await flush();
    expect(await wire.getStatus('t1')).not.toHaveProperty('inputRequests');
    expect(await wire.fetchResult('t1')).toEqual({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'ok' }] },
    });
    expect(calls).toHaveLength(1);
    // A refetch (the first was malformed, say) asks the server again.
    const again = wire.fetchResult('t1');
    await flush();
    expect(calls).toHaveLength(2);
    calls[1]!.resolve({ content: [] });
    await expect(again).resolves.toMatchObject({ status: 'completed' });
    await wire.close();
    expect(handler).toBeUndefined();
  });

  it('a failure fetched after the executor saw the task failed is read without another tasks/get (C6)', async () => {
    // Gate seed 6438: the read settling the error went out 15 ms into a Retry-After of 1,607 ms.
    const sent: string[] = [];
    const t = '2026-01-01T00:00:00Z';
    const channel: RpcChannel = (method, params) => {
      sent.push(method);
      if (method === 'tasks/get') {
        return Promise.resolve({ taskId: params.taskId, status: 'failed', createdAt: t, lastUpdatedAt: t, ttl: null });
      }
      return Promise.reject(new RpcErrorFailure(-32603, 'boom', undefined));
    };
    const wire = createRev20251125Wire({ channel });
    const failed = { status: 'failed', error: { code: -32603, message: 'boom' } };
    await expect(wire.fetchResult('t1', undefined, 'failed')).resolves.toEqual(failed);
    expect(sent).toEqual(['tasks/result']);
    // Not told what the executor saw, the adapter reads once to tell a failure from a cancel.
    await expect(wire.fetchResult('t1')).resolves.toEqual(failed);
    expect(sent).toEqual(['tasks/result', 'tasks/result', 'tasks/get']);
  });

  it('without a request hook sendInput still rejects and input_required opens nothing', async () => {
    const { channel, calls } = scripted(() => 'input_required');
    const wire = createRev20251125Wire({ channel });
    await wire.getStatus('t1');
    expect(calls).toHaveLength(0);
    await expect(wire.sendInput('t1', { a: {} })).rejects.toMatchObject({ kind: 'rejected' });
  });

  it('a held final answer is the first terminal report: status reads and cancels after it ask nothing, and one on the wire yields to it unless it names another terminal status (C13)', async () => {
    // A peer that rewrote a completed task to `cancelled` once it was cancelled (gate seeds 1151
    // and 1892 on this wire): every tasks/get and tasks/cancel answer after the completion lies.
    const sent: string[] = [];
    const held: ((task: Record<string, unknown>) => void)[] = [];
    const results: Call[] = [];
    let hold = false;
    let status = 'input_required';
    const t = '2026-01-01T00:00:00Z';
    const task = () => ({ taskId: 't1', status, createdAt: t, lastUpdatedAt: t, ttl: null });
    const channel: RpcChannel = (method, params) => {
      sent.push(method);
      if (method === 'tasks/get' || method === 'tasks/cancel') {
        return hold ? new Promise((resolve) => held.push(resolve)) : Promise.resolve(task());
      }
      return new Promise((resolve, reject) => results.push({ method, params, resolve, reject }));
    };
    const wire = createRev20251125Wire({ channel, onRequest: () => () => undefined });
    await wire.getStatus('t1');
    expect(sent).toEqual(['tasks/get', 'tasks/result']);

    // Two status reads and two cancels leave; the final answer comes while they are on the wire.
    hold = true;
    const late = [wire.getStatus('t1'), wire.cancel('t1')];
    const lying = [wire.getStatus('t1'), wire.cancel('t1')];
    const done = { content: [{ type: 'text', text: 'ok' }], _meta: { [TAG]: { taskId: 't1' } } };
    results[0]!.resolve(done);
    await flush();
    const outcome = { status: 'completed', result: { content: [{ type: 'text', text: 'ok' }] } };
    // Sent before the task ended: `working` is only late, and yields to the final answer.
    status = 'working';
    held[0]!(task());
    held[1]!(task());
    await expect(late[0]).resolves.toEqual({ taskId: 't1', status: 'completed', outcome });
    await expect(late[1]).resolves.toEqual({ kind: 'already_terminal', status: 'completed' });
    // Another terminal status is a contradiction no late answer explains: passed on, for the
    // executor to compare with the final answer it was told of first.
    status = 'cancelled';
    held[2]!(task());
    held[3]!(task());
    await expect(lying[0]).resolves.toMatchObject({ taskId: 't1', status: 'cancelled' });
    await expect(lying[1]).resolves.toEqual({ kind: 'acked', status: 'cancelled' });

    // After it: nothing more is asked of the server, and the fetch gets the held answer.
    const before = sent.length;
    await expect(wire.getStatus('t1')).resolves.toMatchObject({ status: 'completed' });
    await expect(wire.cancel('t1')).resolves.toEqual({ kind: 'already_terminal', status: 'completed' });
    expect(sent).toHaveLength(before);
    await expect(wire.fetchResult('t1')).resolves.toEqual(outcome);
    expect(sent).toHaveLength(before);
  });

  it('tells the executor of a final answer the moment it is kept (onTerminalHeard), once', async () => {
    const { channel, calls } = scripted(() => 'input_required');
    const wire = createRev20251125Wire({ channel, onRequest: () => () => undefined });
    const heard: unknown[] = [];
    const stop = wire.onTerminalHeard!((taskId, outcome) => heard.push([taskId, outcome]));
    await wire.getStatus('t1');
    expect(heard).toEqual([]);
    calls[0]!.resolve({ content: [{ type: 'text', text: 'ok' }], _meta: { [TAG]: { taskId: 't1' } } });
    await flush();
    expect(heard).toEqual([['t1', { status: 'completed', result: { content: [{ type: 'text', text: 'ok' }] } }]]);
    stop();
    // Without a request hook there is no side channel, and nothing to hear.
    expect('onTerminalHeard' in createRev20251125Wire({ channel })).toBe(false);
  });
});
