import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SEP1391_CAPABILITY } from '../../src/server/wire/sep-1391/index.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { ALICE, LegacySession, eventually, startWireServer, type Json, type WireServer } from './helpers.js';

/** Pushes on the session's GET stream: 2025 status notifications and progress, SEP-1391 progress. */
let server: WireServer;

beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server.close();
});

const progressOf = (messages: Json[], token: string) =>
  messages.filter((m) => m.method === 'notifications/progress' && m.params.progressToken === token);

describe('session notifications', () => {
  test('T-31 T-42 T-47 T-54: progress keeps the original progressToken after CreateTaskResult; status pushes follow', async () => {
    const session = await LegacySession.open(server.url, ALICE);
    const stream = await session.openStream();
    try {
      const created = await session.request('tools/call', {
        name: 'work',
        arguments: { mode: 'block', key: 'n-2025' },
        task: {},
        _meta: { progressToken: 'p-2025' },
      });
      const taskId = created.result.task.taskId as string;
      const progress = await eventually(
        () => Promise.resolve(progressOf(stream.messages, 'p-2025')),
        (found) => found.length > 0,
      );
      expect(progress[0].params).toMatchObject({ progress: 1, total: 2, message: 'halfway' });
      expect(progress[0].params._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId } }); // T-42
      server.gates.release('n-2025');
      const statuses = await eventually(
        () =>
          Promise.resolve(
            stream.messages.filter((m) => m.method === 'notifications/tasks/status' && m.params.taskId === taskId),
          ),
        (found) => found.some((m) => m.params.status === 'completed'),
      );
      expect(statuses.at(-1).params).toMatchObject({ taskId, status: 'completed', ttl: 3_600_000 });
    } finally {
      stream.stop();
    }
  });

  test('L-12: SEP-1391 progress is tagged with _operation and no 2025 status pushes are sent', async () => {
    const session = await LegacySession.open(server.url, ALICE, { experimental: { [SEP1391_CAPABILITY]: {} } });
    const stream = await session.openStream();
    try {
      await session.request('tools/call', {
        name: 'work',
        arguments: { mode: 'block', key: 'n-sep' },
        operation: { token: 'op-progress' },
        _meta: { progressToken: 'p-sep' },
      });
      const progress = await eventually(
        () => Promise.resolve(progressOf(stream.messages, 'p-sep')),
        (found) => found.length > 0,
      );
      expect(progress[0].params._operation).toEqual({ token: 'op-progress' });
      server.gates.release('n-sep');
      await eventually(
        () => session.request('tools/async/status', { token: 'op-progress' }),
        (r) => r.result?.status === 'completed',
      );
      expect(stream.messages.filter((m) => m.method === 'notifications/tasks/status')).toEqual([]);
    } finally {
      stream.stop();
    }
  });
});

describe('session notifications cost nothing without a listener (issue 31)', () => {
  test('a session without its GET stream: its tasks are created and end with no read made for pushes', async () => {
    const base = createMemoryTaskStore();
    let reads = 0;
    const store: TaskStore = {
      ...base,
      readLog: (...args) => {
        reads += 1;
        return base.readLog(...args);
      },
    };
    const quiet = await startWireServer({ store });
    try {
      const session = await LegacySession.open(quiet.url, ALICE);
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const created = await session.request('tools/call', { name: 'work', arguments: { mode: 'ok' }, task: {} });
        ids.push(created.result.task.taskId as string);
      }
      for (const taskId of ids) {
        await eventually(
          () => session.request('tasks/get', { taskId }),
          (r) => r.result?.status === 'completed',
        );
      }
      // A push reads the task's new log lines first; with no stream to carry it, none is read.
      expect(reads).toBe(0);

      // A stream opened later carries what changes after it opened.
      const blocked = await session.request('tools/call', {
        name: 'work',
        arguments: { mode: 'block', key: 'late-listener' },
        task: {},
      });
      const taskId = blocked.result.task.taskId as string;
      const stream = await session.openStream();
      try {
        quiet.gates.release('late-listener');
        await eventually(
          () =>
            Promise.resolve(
              stream.messages.filter((m) => m.method === 'notifications/tasks/status' && m.params.taskId === taskId),
            ),
          (found) => found.some((m) => m.params.status === 'completed'),
        );
      } finally {
        stream.stop();
      }
    } finally {
      await quiet.close();
      await base.close();
    }
  });
});
