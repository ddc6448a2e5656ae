import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask, rpc, startServer, type TestServer } from './helpers.js';

/** S8, X-56: two authenticated principals through the `authenticate` hook; anonymous; 401. */
const TOKENS = new Map([
  ['token-alice', 'alice'],
  ['token-bob', 'bob'],
]);
let server: TestServer;
let url: string;

beforeAll(async () => {
  server = await startServer({
    authenticate: async (req) => {
      const header = req.headers.authorization;
      if (header === undefined) return undefined;
      const token = header.replace(/^Bearer /, '');
      const clientId = TOKENS.get(token);
      if (clientId === undefined) throw new Error('unknown token');
      return { token, clientId, scopes: [] };
    },
  });
  url = server.url;
});
afterAll(async () => {
  await server.close();
});

describe('owner isolation', () => {
  it('S8 a foreign id gets exactly the unknown-id error on get, update and cancel, and is left untouched', async () => {
    const taskId = await createTask(url, 'slow_compute', { seconds: 30 }, { token: 'token-alice' });
    const stored = await server.store.get('auth:alice', taskId, Date.now());
    expect(stored?.owner).toBe('auth:alice');

    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const foreign = await rpc(url, method, { taskId, inputResponses: {} }, { token: 'token-bob' });
      const unknown = await rpc(
        url,
        method,
        { taskId: 'AAAAAAAAAAAAAAAAAAAAAA', inputResponses: {} },
        { token: 'token-bob' },
      );
      expect(foreign.error, method).toMatchObject({ code: -32602 });
      expect(foreign.error, method).toEqual(unknown.error);
      const anonymous = await rpc(url, method, { taskId, inputResponses: {} });
      expect(anonymous.error, method).toEqual(unknown.error);
    }
    const mine = await rpc(url, 'tasks/get', { taskId }, { token: 'token-alice' });
    expect(mine.result.status).toBe('working');
    await rpc(url, 'tasks/cancel', { taskId }, { token: 'token-alice' });
  });

  it('S5 S8 submission keys are per principal: the same key makes two tasks, lookup sees only its own', async () => {
    const key = { 'mcp-terminus.dev/submissionKey': 'shared-key' };
    const alice = await createTask(url, 'slow_compute', { seconds: 30 }, { token: 'token-alice', meta: key });
    const bob = await createTask(url, 'slow_compute', { seconds: 30 }, { token: 'token-bob', meta: key });
    expect(bob).not.toBe(alice);
    const lookup = await rpc(url, 'terminus/tasks/lookup', { submissionKey: 'shared-key' }, { token: 'token-bob' });
    expect(lookup.result.task.taskId).toBe(bob);
    await rpc(url, 'tasks/cancel', { taskId: alice }, { token: 'token-alice' });
    await rpc(url, 'tasks/cancel', { taskId: bob }, { token: 'token-bob' });
  });

  it('unauthenticated callers share the owner "anonymous" (the task id is the capability)', async () => {
    const taskId = await createTask(url, 'slow_compute', { seconds: 30 });
    expect((await server.store.get('anonymous', taskId, Date.now()))?.owner).toBe('anonymous');
    const again = await rpc(url, 'tasks/get', { taskId });
    expect(again.result.taskId).toBe(taskId);
    await rpc(url, 'tasks/cancel', { taskId });
  });

  it('a request the authenticate hook rejects is answered 401 and reaches no handler', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: 'Bearer stolen', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });
});
