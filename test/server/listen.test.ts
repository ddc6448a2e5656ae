import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask, postListen, sseMessages, startServer, type TestServer } from './helpers.js';

/** `notifications/tasks` on `subscriptions/listen` streams (reference 2.7), served by our precheck. */
const TOKENS = new Map([
  ['token-alice', 'alice'],
  ['token-bob', 'bob'],
]);
let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    authenticate: async (req) => {
      const token = req.headers.authorization?.replace(/^Bearer /, '');
      const clientId = token === undefined ? undefined : TOKENS.get(token);
      return clientId === undefined ? undefined : { token: token as string, clientId, scopes: [] };
    },
  });
});
afterAll(async () => {
  await server.close();
});

interface Frame {
  method?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
  params?: any;
}

/** Opens a listen stream and collects its messages until `enough` says so. */
async function listen(
  taskIds: string[],
  enough: (frames: Frame[]) => boolean,
  options: { token?: string; extra?: Record<string, unknown> } = {},
): Promise<Frame[]> {
  const controller = new AbortController();
  const response = await postListen(server.url, taskIds, { ...options, signal: controller.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const frames: Frame[] = [];
  try {
    if (!enough(frames)) {
      for await (const frame of sseMessages<Frame>(response.body!)) {
        frames.push(frame);
        if (enough(frames)) break;
      }
    }
  } finally {
    controller.abort();
  }
  return frames;
}

const terminal = (frames: Frame[]) =>
  frames.some(
    (f) => f.method === 'notifications/tasks' && ['completed', 'failed', 'cancelled'].includes(f.params.status),
  );

describe('subscriptions/listen with taskIds', () => {
  it('X-67 acks first, then pushes full DetailedTasks until terminal, all stamped with the subscription id (X-41)', async () => {
    const taskId = await createTask(server.url, 'slow_compute', { seconds: 1, label: 'pushed' });
    const frames = await listen([taskId], terminal);
    expect(frames[0]).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [taskId] } },
    });
    const tasks = frames.slice(1);
    expect(tasks.every((f) => f.method === 'notifications/tasks')).toBe(true);
    for (const f of frames) expect(f.params._meta['io.modelcontextprotocol/subscriptionId']).toBe('sub-1');
    const last = tasks.at(-1)!.params;
    expect(last).toMatchObject({ taskId, status: 'completed', result: { resultType: 'complete' } });
    expect(last.result.content[0].text).toBe('pushed: done after 1 s');
  });

  it('pushes input_required with its inputRequests', async () => {
    const taskId = await createTask(server.url, 'confirm_delete', { filename: 'pushed.txt' });
    const frames = await listen([taskId], (fs) => fs.some((f) => f.params?.status === 'input_required'));
    const parked = frames.find((f) => f.params?.status === 'input_required')!;
    expect(Object.values(parked.params.inputRequests as Record<string, { method: string }>)[0]?.method).toBe(
      'elicitation/create',
    );
    await server.engine.cancel('anonymous', taskId);
  });

  it('S8 the ack leaves out unknown and foreign ids alike', async () => {
    const alices = await createTask(server.url, 'slow_compute', { seconds: 30 }, { token: 'token-alice' });
    const bobs = await createTask(server.url, 'slow_compute', { seconds: 30 }, { token: 'token-bob' });
    const frames = await listen([alices, bobs, 'AAAAAAAAAAAAAAAAAAAAAA'], (fs) => fs.length >= 1, {
      token: 'token-bob',
    });
    expect(frames[0]?.params.notifications.taskIds).toEqual([bobs]);
    await server.engine.cancel('auth:alice', alices);
    await server.engine.cancel('auth:bob', bobs);
  });
});
