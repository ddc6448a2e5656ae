import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { requestDigest } from '../../src/core/digest.js';
import { systemClock } from '../../src/core/system.js';
import { MAX_RETENTION_MS, type TaskRecord } from '../../src/core/task.js';
import { SEP1391_CAPABILITY } from '../../src/server/wire/sep-1391/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { ALICE, LegacySession, startWireServer } from '../wires/helpers.js';
import { engineFor, OWNER, text, tool } from './helpers.js';

/**
 * Issue 12 item 3: a task whose outcome cannot be recorded ends `failed` with the reason, on a real
 * SQLite file, instead of re-running every lease (epoch 1, 2, 3, ...) for ever.
 */
let dir: string;
let store: TaskStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-unrecordable-'));
  store = await openSqliteTaskStore({ path: join(dir, 'tasks.db') });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function settled(id: string): Promise<TaskRecord> {
  for (let i = 0; i < 200; i++) {
    const task = await store.get(OWNER, id, systemClock.now());
    if (task !== null && ['completed', 'failed', 'cancelled'].includes(task.status)) return task;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`task ${id} never ended: ${JSON.stringify(await store.get(OWNER, id, systemClock.now()))}`);
}

describe('an outcome that cannot be recorded (issue 12 item 3, SQLite)', () => {
  test('T-34 T-80: a ttl and a keepAlive that overflow expires_at at the terminal write are clamped; the task completes once', async () => {
    let runs = 0;
    const engine = engineFor(store, [tool('t', async () => (runs++, text('ok')))]);
    engine.start();
    try {
      // Both fit the INTEGER columns at create; createdAt / terminalAt + them do not (2^63).
      const byTtl = await engine.submit({
        owner: OWNER,
        tool: 't',
        args: {},
        wire: 'mcp-2025-11-25',
        ttlMs: 9.223372036854e18,
      });
      const byKeepAlive = await engine.submit({
        owner: OWNER,
        tool: 't',
        args: {},
        wire: 'sep-1391',
        keepAliveMs: 9.223372036854e18,
      });
      expect(byTtl.task.ttlMs).toBe(MAX_RETENTION_MS);
      expect(byKeepAlive.task.keepAliveMs).toBe(MAX_RETENTION_MS);
      for (const { task } of [byTtl, byKeepAlive]) {
        expect(await settled(task.id)).toMatchObject({ status: 'completed', epoch: 1 });
      }
      expect(runs).toBe(2);
    } finally {
      await engine.stop();
    }
  });

  test('a task stored with such a ttl before the clamp existed still completes (expires_at saturates)', async () => {
    const { task } = await store.create({
      id: 'stored-huge-ttl',
      owner: OWNER,
      tool: 't',
      args: {},
      requestDigest: requestDigest('t', {}),
      submissionKey: null,
      wire: 'mcp-2025-11-25',
      ttlMs: 9.223372036854e18,
      keepAliveMs: null,
      pollIntervalMs: 1000,
      now: systemClock.now(),
    });
    const engine = engineFor(store, [tool('t', async () => text('ok'))]);
    engine.start();
    try {
      expect(await settled(task.id)).toMatchObject({ status: 'completed', epoch: 1 });
    } finally {
      await engine.stop();
    }
  });

  test('a result the store cannot hold ends the task failed with the reason, after one run', async () => {
    let runs = 0;
    const bad = tool('bad', async () => {
      runs++;
      // A BigInt has no JSON form: neither the digest nor the row can be written.
      return { content: [], structuredContent: { n: 10n as unknown as number } };
    });
    const engine = engineFor(store, [bad]);
    engine.start();
    try {
      const { task } = await engine.submit({ owner: OWNER, tool: 'bad', args: {}, wire: 'mcp-tasks-ext' });
      const done = await settled(task.id);
      expect(done).toMatchObject({ status: 'failed', epoch: 1, error: { code: -32603 } });
      expect(done.error?.message).toMatch(/could not be serialised/);
      expect(runs).toBe(1);
    } finally {
      await engine.stop();
    }
  });

  test('progress with NaN or Infinity is refused to the handler, and nothing unreadable is stored', async () => {
    const refusals: unknown[] = [];
    const engine = engineFor(store, [
      tool('p', async (_args, ctx) => {
        for (const [done, total] of [
          [Number.NaN, 1],
          [1, Number.POSITIVE_INFINITY],
        ] as const) {
          await ctx.progress(done, total).catch((e: unknown) => refusals.push(e));
        }
        await ctx.progress(1, 2);
        return text('ok');
      }),
    ]);
    engine.start();
    try {
      const { task } = await engine.submit({ owner: OWNER, tool: 'p', args: {}, wire: 'mcp-tasks-ext' });
      expect(await settled(task.id)).toMatchObject({ status: 'completed', progress: { done: 1, total: 2 } });
      expect(refusals).toHaveLength(2);
      expect(refusals[0]).toMatchObject({ code: 'invalid_argument', details: { field: 'progress' } });
    } finally {
      await engine.stop();
    }
  });

  test('a task whose runs all ended without an outcome fails at maxAttempts instead of running again', async () => {
    const { task } = await store.create({
      id: 'crash-looper',
      owner: OWNER,
      tool: 't',
      args: {},
      requestDigest: requestDigest('t', {}),
      submissionKey: null,
      wire: 'mcp-tasks-ext',
      ttlMs: null,
      keepAliveMs: null,
      pollIntervalMs: 1000,
      now: systemClock.now(),
    });
    // Three runs that died (claimed, never finished, lease expired): epoch 3.
    for (let i = 0; i < 3; i++) {
      await store.claim({ workerId: `dead-${i}`, now: systemClock.now() + i * 10, leaseMs: 1, limit: 1, tools: ['t'] });
    }
    let runs = 0;
    const engine = engineFor(store, [tool('t', async () => (runs++, text('ok')))], { maxAttempts: 3 });
    engine.start();
    try {
      const done = await settled(task.id);
      expect(done).toMatchObject({ status: 'failed', epoch: 4, error: { code: -32603 } });
      expect(done.error?.message).toMatch(/ran 3 times \(maxAttempts 3\) without recording an outcome/);
      expect(runs).toBe(0);
    } finally {
      await engine.stop();
    }
  });

  test('on the wires: 2025 ttl 1e300 and SEP-1391 keepAlive 1e300 are clamped and reported, not -32603', async () => {
    const server = await startWireServer({ store });
    try {
      const session = await LegacySession.open(server.url, ALICE, { tasks: { requests: { tools: { call: {} } } } });
      const legacy = await session.request('tools/call', { name: 'work', arguments: {}, task: { ttl: 1e300 } });
      expect(legacy.error).toBeUndefined();
      expect(legacy.result.task.ttl).toBe(MAX_RETENTION_MS);
      const negative = await session.request('tools/call', { name: 'work', arguments: {}, task: { ttl: -1 } });
      expect(negative.error).toMatchObject({ code: -32602, message: expect.stringMatching(/task\.ttl/) });
      const async = await LegacySession.open(server.url, ALICE, { experimental: { [SEP1391_CAPABILITY]: {} } });
      const call = await async.request('tools/call', { name: 'work', arguments: {}, operation: { keepAlive: 1e300 } });
      expect(call.error).toBeUndefined();
      expect(call.result.operation.keepAlive).toBe(MAX_RETENTION_MS / 1000);
    } finally {
      await server.close();
    }
  });
});
