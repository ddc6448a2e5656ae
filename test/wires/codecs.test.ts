import { describe, expect, test } from 'vitest';
import type { TaskRecord } from '../../src/core/task.js';
import { taskRecord } from '../fixtures/task-record.js';
import { aip151Codec } from '../../src/server/wire/aip-151/index.js';
import { rev20251125Codec } from '../../src/server/wire/rev2025-11-25/index.js';
import { sep1391Codec } from '../../src/server/wire/sep-1391/index.js';

/** The pure codecs of the three wires: decode -> command input, encode <- TaskRecord. */
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

function record(patch: Partial<TaskRecord> = {}): TaskRecord {
  return taskRecord(T0, {
    owner: 'auth:alice',
    updatedAt: T0 + 1000,
    ttlMs: 60_000,
    pollIntervalMs: 500,
    wire: 'mcp-2025-11-25',
    ...patch,
  });
}

const toolError = { content: [{ type: 'text', text: 'bad input' }], isError: true };

describe('2025-11-25 codec', () => {
  test('T-32 T-33 T-35 T-37 T-90: Task fields, ISO times, ttl and pollInterval in ms', () => {
    expect(rev20251125Codec.encodeTask(record())).toEqual({
      taskId: 'task-1',
      status: 'working',
      createdAt: '2026-01-01T00:00:00.000Z',
      lastUpdatedAt: '2026-01-01T00:00:01.000Z',
      ttl: 60_000,
      pollInterval: 500,
    });
    expect(rev20251125Codec.encodeTask(record({ ttlMs: null })).ttl).toBeNull();
  });

  test('T-24 T-25: isError results are failed here, with the tool text as statusMessage', () => {
    const task = record({ status: 'completed', result: toolError, terminalAt: T0 + 2000 });
    expect(rev20251125Codec.projectStatus(task)).toBe('failed');
    expect(rev20251125Codec.encodeTask(task)).toMatchObject({ status: 'failed', statusMessage: 'bad input' });
    expect(rev20251125Codec.encodeCreateTaskResult(record())).toEqual({ task: rev20251125Codec.encodeTask(record()) });
  });

  test('a SEP-1391 task retains from completion: ttl unknown (null) while it works, exact afterwards', () => {
    expect(rev20251125Codec.ttlOf(record({ keepAliveMs: 30_000 }))).toBeNull();
    expect(rev20251125Codec.ttlOf(record({ keepAliveMs: 30_000, terminalAt: T0 + 5000 }))).toBe(35_000);
  });

  test('T-38 T-40 T-41: payloads replay the outcome with related-task _meta; none before terminal', () => {
    expect(rev20251125Codec.encodePayload(record())).toBeUndefined();
    const done = rev20251125Codec.encodePayload(
      record({ status: 'completed', result: { content: [], _meta: { a: 1 } } }),
    );
    expect(done).toEqual({
      kind: 'result',
      result: { content: [], _meta: { a: 1, 'io.modelcontextprotocol/related-task': { taskId: 'task-1' } } },
    });
    const failed = rev20251125Codec.encodePayload(record({ status: 'failed', error: { code: -32010, message: 'no' } }));
    expect(failed).toEqual({ kind: 'error', error: { code: -32010, message: 'no' } });
    expect(rev20251125Codec.encodePayload(record({ status: 'cancelled' }))).toEqual({ kind: 'cancelled' });
  });

  test('T-14 decode: task.ttl in ms, null allowed, negatives refused; related-task _meta never names the task (T-44)', () => {
    expect(rev20251125Codec.decodeToolCall({ name: 'w', task: { ttl: 5 } }).task).toEqual({ ttlMs: 5 });
    expect(rev20251125Codec.decodeToolCall({ name: 'w', task: { ttl: null } }).task).toEqual({ ttlMs: null });
    expect(rev20251125Codec.decodeToolCall({ name: 'w' }).task).toBeUndefined();
    expect(() => rev20251125Codec.decodeToolCall({ name: 'w', task: { ttl: -1 } })).toThrow(/ttl/);
    expect(() =>
      rev20251125Codec.decodeTaskRef({ _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'x' } } }),
    ).toThrow(/taskId is required/);
  });
});

describe('SEP-1391 codec', () => {
  test('L-18: submitted before the first claim, working after; canceled with one l', () => {
    expect(sep1391Codec.projectStatus(record({ epoch: 0 }))).toBe('submitted');
    expect(sep1391Codec.projectStatus(record({ epoch: 2 }))).toBe('working');
    expect(sep1391Codec.projectStatus(record({ status: 'cancelled' }))).toBe('canceled');
  });

  test('L-09 L-21 L-25: operation { token, keepAlive s, pollFrequency s }; token is the client key', () => {
    const task = record({ wire: 'sep-1391', submissionKey: 'tok', keepAliveMs: 90_000, pollIntervalMs: 1500 });
    expect(sep1391Codec.encodeAccepted(task)).toEqual({
      content: [],
      operation: { token: 'tok', keepAlive: 90, pollFrequency: 1.5 },
    });
    expect(sep1391Codec.tokenOf(record({ submissionKey: 'k' }))).toBe('task-1'); // another wire's key is not a token
  });

  test('L-11: error only when failed', () => {
    expect(sep1391Codec.encodeStatus(record({ status: 'completed' }))).toEqual({ status: 'completed' });
    expect(sep1391Codec.encodeStatus(record({ status: 'failed', error: { code: 1, message: 'boom' } }))).toEqual({
      status: 'failed',
      error: 'boom',
    });
  });

  test('L-08 decode: keepAlive integer seconds, token bounded', () => {
    expect(sep1391Codec.decodeAsyncCall({ name: 'w', operation: { token: 't', keepAlive: 3 } })).toMatchObject({
      token: 't',
      keepAliveS: 3,
    });
    expect(() => sep1391Codec.decodeAsyncCall({ name: 'w', operation: { keepAlive: 1.5 } })).toThrow(/keepAlive/);
    expect(() => sep1391Codec.decodeAsyncCall({ name: 'w', operation: { token: '' } })).toThrow(/token/);
  });
});

describe('AIP-151 codec', () => {
  test('G-20: done=false carries neither error nor response', () => {
    const op = aip151Codec.encodeOperation(record());
    expect(op).toMatchObject({ name: 'operations/task-1', done: false });
    expect('error' in op || 'response' in op).toBe(false);
    expect(op.metadata).toMatchObject({
      status: 'working',
      pollInterval: '0.5s',
      createTime: '2026-01-01T00:00:00.000Z',
    });
  });

  test('G-20 G-24: done=true carries exactly one of response / error; cancelled is code 1', () => {
    const completed = aip151Codec.encodeOperation(
      record({ status: 'completed', result: toolError, terminalAt: T0 + 9 }),
    );
    expect(completed.response).toMatchObject({ isError: true });
    expect(completed.error).toBeUndefined();
    const cancelled = aip151Codec.encodeOperation(record({ status: 'cancelled', terminalAt: T0 + 9 }));
    expect(cancelled.error?.code).toBe(1);
    expect(cancelled.response).toBeUndefined();
    const failed = aip151Codec.encodeOperation(record({ status: 'failed', error: { code: -32602, message: 'x' } }));
    expect(failed.error).toMatchObject({ code: 3, message: 'x' });
  });

  test('filter subset: done, metadata.status, metadata.wire joined by AND; anything else refused', () => {
    expect(aip151Codec.decodeFilter('')).toEqual({ status: undefined, wire: undefined });
    expect(aip151Codec.decodeFilter('done = true')).toEqual({
      status: ['completed', 'failed', 'cancelled'],
      wire: undefined,
    });
    expect(aip151Codec.decodeFilter('done=false AND metadata.wire = "aip-151"')).toEqual({
      status: ['working', 'input_required'],
      wire: 'aip-151',
    });
    expect(aip151Codec.decodeFilter('done = true AND metadata.status = working').status).toEqual([]);
    expect(() => aip151Codec.decodeFilter('metadata.tool = "x"')).toThrow(/unsupported filter field/);
    expect(() => aip151Codec.decodeFilter('done = maybe')).toThrow(/done/);
  });

  test('G-27: Duration strings, capped; page_size 0 means default, above max is coerced', () => {
    expect(aip151Codec.decodeDuration('1.5s')).toBe(1500);
    expect(aip151Codec.decodeDuration(undefined)).toBe(30_000);
    expect(aip151Codec.decodeDuration('99999s')).toBe(300_000);
    expect(() => aip151Codec.decodeDuration('5m')).toThrow(/Duration/);
    expect(aip151Codec.decodeListQuery(new URLSearchParams('page_size=0')).pageSize).toBe(50);
    expect(aip151Codec.decodeListQuery(new URLSearchParams('pageSize=5000')).pageSize).toBe(1000);
    expect(() => aip151Codec.decodeListQuery(new URLSearchParams('page_size=-1'))).toThrow(/page_size/);
  });

  test('AIP-155: requestId is an optional bounded string', () => {
    expect(aip151Codec.decodeRunBody({ arguments: { a: 1 }, requestId: 'r' })).toEqual({
      args: { a: 1 },
      requestId: 'r',
    });
    expect(aip151Codec.decodeRunBody({})).toEqual({ args: {}, requestId: undefined });
    expect(() => aip151Codec.decodeRunBody({ requestId: 7 })).toThrow(/requestId/);
  });
});
