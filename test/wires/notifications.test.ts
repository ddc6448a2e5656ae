import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SEP1391_CAPABILITY } from '../../src/server/wire/sep-1391/index.js';
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
