import { encodeEventCursor } from '../../src/core/event-cursor.js';
import { describe, expect, it } from 'vitest';
import { TerminusError } from '../../src/core/errors.js';
import type { TaskRecord } from '../../src/core/task.js';
import { taskRecord } from '../fixtures/task-record.js';
import {
  checkResponses,
  decodeLookup,
  decodeTaskRef,
  decodeToolCall,
  decodeUpdate,
} from '../../src/server/wire/tasks-ext/decode.js';
import {
  encodeAck,
  encodeCreateTaskResult,
  encodeGetTaskResult,
  encodeLookupFound,
  encodeLookupNeverCreated,
} from '../../src/server/wire/tasks-ext/encode.js';
import { taskNotFoundError, toProtocolError } from '../../src/server/wire/tasks-ext/errors.js';

const T0 = Date.UTC(2026, 6, 28, 12, 0, 0);

function record(overrides: Partial<TaskRecord> = {}): TaskRecord {
  return taskRecord(T0, {
    id: 'AAAAAAAAAAAAAAAAAAAAAA',
    tool: 'slow_compute',
    args: { seconds: 1 },
    updatedAt: T0 + 1500,
    ttlMs: 3_600_000,
    pollIntervalMs: 200,
    ...overrides,
  });
}

/** What a thrown ProtocolError looks like on the wire. */
function wireError(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    const e = error as { code: number; message: string; data?: unknown };
    return { code: e.code, message: e.message, data: e.data };
  }
  throw new Error('expected a throw');
}

describe('tasks-ext encode', () => {
  it('X-06 CreateTaskResult is flat with resultType "task", ISO times and no 2025 keys', () => {
    const out = encodeCreateTaskResult(record());
    expect(out).toMatchObject({
      resultType: 'task',
      taskId: 'AAAAAAAAAAAAAAAAAAAAAA',
      status: 'working',
      createdAt: '2026-07-28T12:00:00.000Z',
      lastUpdatedAt: '2026-07-28T12:00:01.500Z',
      ttlMs: 3_600_000,
      pollIntervalMs: 200,
    });
    for (const key of ['task', 'ttl', 'pollInterval', 'result', 'error', 'inputRequests', 'requestState']) {
      expect(out).not.toHaveProperty(key);
    }
    expect(out._meta).toEqual({ 'mcp-terminus.dev/submission': { created: true } });
    expect(encodeCreateTaskResult(record(), false)._meta).toEqual({
      'mcp-terminus.dev/submission': { created: false },
    });
  });

  it('ttlMs is always present: null for unlimited, a positive integer otherwise; a bad poll interval is omitted', () => {
    expect(encodeCreateTaskResult(record({ ttlMs: null })).ttlMs).toBeNull();
    expect(encodeCreateTaskResult(record({ ttlMs: 0 })).ttlMs).toBe(1);
    expect(encodeCreateTaskResult(record({ pollIntervalMs: 0 }))).not.toHaveProperty('pollIntervalMs');
  });

  it('X-15 X-21 working: task fields only, resultType "complete", progress as status message and _meta', () => {
    const out = encodeGetTaskResult(record({ progress: { done: 3, total: 10, message: 'section 3' } }));
    expect(out.resultType).toBe('complete');
    expect(out.status).toBe('working');
    expect(out.statusMessage).toBe('3/10: section 3');
    expect(out._meta).toEqual({
      'mcp-terminus.dev/progress': { done: 3, total: 10, message: 'section 3' },
      // Where the task's ordered events stand (issue 32): its last seq and the cursor after it.
      'mcp-terminus.dev/events': { lastSeq: 1, cursor: encodeEventCursor('AAAAAAAAAAAAAAAAAAAAAA', 1) },
    });
    for (const key of ['result', 'error', 'inputRequests']) expect(out).not.toHaveProperty(key);
  });

  it('X-16 X-17 input_required carries every outstanding request', () => {
    const inputRequests = {
      a: { method: 'elicitation/create', params: { message: 'A?', requestedSchema: { type: 'object' } } },
      b: { method: 'elicitation/create', params: { message: 'B?', requestedSchema: { type: 'object' } } },
    };
    const out = encodeGetTaskResult(record({ status: 'input_required', inputRequests }));
    expect(out.inputRequests).toEqual(inputRequests);
  });

  it('X-18 X-54 completed inlines the result with resultType "complete" and without related-task meta', () => {
    const result = {
      content: [{ type: 'text', text: 'ok' }],
      isError: true,
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'x' }, keep: 1 },
    };
    const out = encodeGetTaskResult(record({ status: 'completed', result, terminalAt: T0 + 2000 }));
    expect(out.result).toEqual({
      content: [{ type: 'text', text: 'ok' }],
      isError: true,
      resultType: 'complete',
      _meta: { keep: 1 },
    });
    expect(out).not.toHaveProperty('error');
  });

  it('a completed task does not keep its last progress line as status message', () => {
    const out = encodeGetTaskResult(
      record({
        status: 'completed',
        result: { content: [] },
        statusMessage: 'computing',
        progress: { done: 0, message: 'computing' },
      }),
    );
    expect(out).not.toHaveProperty('statusMessage');
  });

  it('X-20 X-49 X-50 failed carries the JSON-RPC error and a diagnostic status message, no result', () => {
    const out = encodeGetTaskResult(record({ status: 'failed', error: { code: -32603, message: 'boom' } }));
    expect(out.error).toEqual({ code: -32603, message: 'boom' });
    expect(out.statusMessage).toBe('boom');
    expect(out).not.toHaveProperty('result');
  });

  it('X-19 cancelled: task fields only', () => {
    const out = encodeGetTaskResult(record({ status: 'cancelled', terminalAt: T0 + 5 }));
    expect(out.status).toBe('cancelled');
    for (const key of ['result', 'error', 'inputRequests']) expect(out).not.toHaveProperty(key);
  });

  it('X-31 X-35 X-37 X-39 acks are empty results with resultType "complete"', () => {
    expect(encodeAck()).toEqual({ resultType: 'complete' });
  });

  it('lookup answers: found with the detailed task, or never created', () => {
    const found = encodeLookupFound(record());
    expect(found).toMatchObject({ resultType: 'complete', found: true, task: { taskId: 'AAAAAAAAAAAAAAAAAAAAAA' } });
    expect(found.found && found.task).not.toHaveProperty('resultType');
    expect(encodeLookupNeverCreated()).toEqual({ resultType: 'complete', found: false, neverCreated: true });
  });
});

describe('tasks-ext decode', () => {
  it('S8 a string that cannot be an id gets exactly the unknown-id error', () => {
    const notFound = wireError(() => {
      throw taskNotFoundError();
    });
    expect(notFound.code).toBe(-32602);
    expect(wireError(() => decodeTaskRef({ taskId: '' }))).toEqual(notFound);
    expect(wireError(() => decodeTaskRef({ taskId: 'x'.repeat(300) }))).toEqual(notFound);
    expect(
      wireError(() => {
        throw toProtocolError(new TerminusError('not_found', 'Task not found'));
      }),
    ).toEqual(notFound);
  });

  it('a missing or non-string taskId is a parameter error naming it', () => {
    expect(wireError(() => decodeTaskRef({}))).toMatchObject({ code: -32602, message: 'taskId is required' });
    expect(wireError(() => decodeTaskRef({ taskId: 7 }))).toMatchObject({
      code: -32602,
      message: 'taskId must be a string',
    });
    expect(decodeTaskRef({ taskId: 'abc' })).toEqual({ taskId: 'abc' });
  });

  it('tasks/update takes the responses the SDK lifted, defaulting to none', () => {
    expect(decodeUpdate({ taskId: 't' }, undefined)).toEqual({ taskId: 't', responses: {} });
    expect(decodeUpdate({ taskId: 't' }, { k: { action: 'accept' } }).responses).toEqual({ k: { action: 'accept' } });
  });

  it('tools/call: name, arguments and the submission key from _meta', () => {
    expect(decodeToolCall({ name: 'x' })).toEqual({ tool: 'x', args: {}, submissionKey: undefined });
    expect(
      decodeToolCall({ name: 'x', arguments: { a: 1 }, _meta: { 'mcp-terminus.dev/submissionKey': 'k-1' } }),
    ).toEqual({ tool: 'x', args: { a: 1 }, submissionKey: 'k-1' });
    expect(wireError(() => decodeToolCall({ name: '' })).code).toBe(-32602);
    expect(wireError(() => decodeToolCall({ name: 'x', arguments: [1] }))).toMatchObject({
      code: -32602,
      data: { reason: 'invalid_arguments' },
    });
    const badKey = wireError(() => decodeToolCall({ name: 'x', _meta: { 'mcp-terminus.dev/submissionKey': 5 } }));
    expect(badKey.code).toBe(-32602);
    expect(badKey.message).toContain('mcp-terminus.dev/submissionKey');
    expect(
      wireError(() => decodeToolCall({ name: 'x', _meta: { 'mcp-terminus.dev/submissionKey': 'k'.repeat(257) } })).code,
    ).toBe(-32602);
  });

  it('answers to outstanding elicitations must be ElicitResults; other keys are not checked', () => {
    const outstanding = { q: { method: 'elicitation/create' } };
    expect(() => checkResponses({ q: { action: 'accept', content: { confirm: true } } }, outstanding)).not.toThrow();
    expect(() => checkResponses({ q: { action: 'decline' } }, outstanding)).not.toThrow();
    expect(() => checkResponses({ other: { ignored: true } }, outstanding)).not.toThrow();
    expect(wireError(() => checkResponses({ q: { ignored: true } }, outstanding))).toMatchObject({ code: -32602 });
    expect(wireError(() => checkResponses({ q: { action: 'accept', content: 'yes' } }, outstanding)).message).toContain(
      'inputResponses["q"]',
    );
  });

  it('lookup needs a non-empty submissionKey', () => {
    expect(decodeLookup({ submissionKey: 'k' })).toEqual({ submissionKey: 'k' });
    expect(wireError(() => decodeLookup({})).message).toBe('submissionKey is required');
    expect(wireError(() => decodeLookup({ submissionKey: '' })).code).toBe(-32602);
  });
});

describe('tasks-ext errors', () => {
  it('S5 S6 key conflicts and burned keys are -32602 with distinct reasons', () => {
    const conflict = wireError(() => {
      throw toProtocolError(new TerminusError('submission_key_conflict', 'x'));
    });
    const burned = wireError(() => {
      throw toProtocolError(new TerminusError('submission_key_burned', 'x'));
    });
    expect(conflict).toMatchObject({ code: -32602, data: { reason: 'submission_key_conflict' } });
    expect(burned).toMatchObject({ code: -32602, data: { reason: 'submission_key_never_created' } });
    expect(burned.message).toContain('never created');
  });

  it('X-46 unknown failures are -32603 without internals; capability_required is -32021 naming the extension', () => {
    const internal = wireError(() => {
      throw toProtocolError(new Error('secret path /etc/x'));
    });
    expect(internal).toEqual({ code: -32603, message: 'Internal error', data: undefined });
    expect(
      wireError(() => {
        throw toProtocolError(new TerminusError('capability_required', 'needs a task'));
      }),
    ).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    });
  });
});
