/**
 * What the client wire adapters refuse or clean in a server's answer before the executor sees it
 * (C13's spirit: a malformed answer is never believed): task ids that are not ids, a status short of
 * terminal carrying an outcome, results that are not CallToolResults; out-of-range optional fields
 * are dropped and long messages cut. Every MCP wire decodes through these.
 */
import { describe, expect, it } from 'vitest';
import { callToolResult } from '../../src/executor/adapters/call-tool-result.js';
import { PROGRESS_META } from '../../src/executor/adapters/envelope.js';
import { decodeCreate as decodeCreate2025, decodeResult } from '../../src/executor/adapters/rev2025-11-25/codec.js';
import { decodeAccepted } from '../../src/executor/adapters/sep-1391/codec.js';
import {
  decodeSnapshot,
  decodeTaskId,
  LEGACY_FIELDS,
  MAX_MESSAGE_LENGTH,
  MODERN_FIELDS,
} from '../../src/executor/adapters/snapshot.js';
import { decodeStatus } from '../../src/executor/adapters/tasks-ext/codec.js';
import { WireFailure } from '../../src/executor/wire-port.js';

const malformed = (run: () => unknown, message: RegExp): void => {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(WireFailure);
  expect((thrown as WireFailure).kind).toBe('malformed');
  expect((thrown as WireFailure).message).toMatch(message);
};

const createdAt = '2026-01-01T00:00:00.000Z';

describe('client adapters: what a server answer must be', () => {
  it('a task id is 1-256 visible ASCII characters, no dot segment between slashes, no backslash', () => {
    for (const id of [
      't-1',
      'a1b2c3',
      '0b3c2f0e-1d4e-4e8a-9a43-6c6a4d2b7f10',
      'op_abc.def:1',
      'x'.repeat(256),
      'a/b',
      'q83v/Ab+9w==',
      '..x/y.',
    ]) {
      expect(decodeTaskId(id)).toBe(id);
    }
    for (const id of [
      '../../etc',
      './x',
      'a/../b',
      'a/..',
      'a\\b',
      'two words',
      'tab\there',
      'nl\n',
      'é',
      'x'.repeat(257),
      '',
    ]) {
      malformed(() => decodeTaskId(id), /taskId|task has no/);
    }
    malformed(() => decodeTaskId(42), /task has no taskId/);
    malformed(
      () => decodeCreate2025({ task: { taskId: '../../etc', status: 'working' } }),
      /"\.\.\/\.\.\/etc" is not a task id/,
    );
    malformed(() => decodeAccepted({ content: [], operation: { token: 'a b' } }), /operation\.token/);
  });

  it('a status short of terminal carrying a result or an error contradicts itself', () => {
    const working = { taskId: 't-1', status: 'working', createdAt, ttlMs: 1000 };
    malformed(() => decodeStatus({ ...working, result: { content: [] } }, 't-1'), /a working task carries a result/);
    malformed(
      () => decodeSnapshot({ ...working, status: 'input_required', error: {} }, MODERN_FIELDS),
      /an input_required task carries an error|a input_required task carries an error/,
    );
    malformed(() => decodeSnapshot({ ...working, status: 'done' }, MODERN_FIELDS), /unknown task status "done"/);
    malformed(() => decodeSnapshot({ ...working, status: ['working'] }, MODERN_FIELDS), /unknown task status/);
    expect(decodeStatus({ ...working, status: 'completed', result: { content: [] } }, 't-1').status).toBe('completed');
  });

  it('out-of-range optional fields are dropped, long messages cut', () => {
    const snapshot = decodeSnapshot(
      {
        taskId: 't-1',
        status: 'working',
        createdAt,
        ttl: -1,
        pollInterval: Number.POSITIVE_INFINITY,
        statusMessage: 'x'.repeat(5_000_000),
        _meta: { [PROGRESS_META]: { done: Number.NaN, total: 3 } },
      },
      LEGACY_FIELDS,
    );
    expect(snapshot.expiresAt).toBeUndefined();
    expect(snapshot.pollIntervalMs).toBeUndefined();
    expect(snapshot.progress).toBeUndefined();
    expect(snapshot.statusMessage!.length).toBe(MAX_MESSAGE_LENGTH);
    const kept = decodeSnapshot(
      { taskId: 't-2', status: 'working', createdAt, ttl: 5000, pollInterval: 1e300 },
      LEGACY_FIELDS,
    );
    expect(kept.expiresAt).toBe(Date.parse(createdAt) + 5000);
    // A huge interval is the executor's to clamp (maxPollIntervalMs), not the codec's.
    expect(kept.pollIntervalMs).toBe(1e300);
  });

  it("a result must pass the MCP SDK's CallToolResult schema, and is kept as sent", () => {
    const result = { content: [{ type: 'text', text: 'ok' }], extra: 1 };
    expect(callToolResult(result, 'r')).toBe(result);
    malformed(() => callToolResult({ content: [42] }, 'tasks/result answer'), /not a CallToolResult \(content\.0: /);
    malformed(() => callToolResult({ content: [{ type: 'text', text: 'a' }], isError: 'yes' }, 'r'), /isError/);
    malformed(() => decodeResult({ content: [42] }), /tasks\/result answer is not a CallToolResult/);
    malformed(() => decodeCreate2025({ content: [{ type: 'text' }] }), /tools\/call answer is not a CallToolResult/);
  });
});
