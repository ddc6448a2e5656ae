import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask, rpc, startServer, type TestServer } from './helpers.js';

/** S5, S6 over the wire: the `_meta` submission key and `terminus/tasks/lookup`. */
const KEY = 'mcp-terminus.dev/submissionKey';
/** These callers are anonymous: their keys must carry 128 random bits (issue 12 item 1). */
const keys = new Map<string, string>();
const key = (name: string): string => {
  if (!keys.has(name)) keys.set(name, `${name}-${randomBytes(16).toString('base64url')}`);
  return keys.get(name) as string;
};
let server: TestServer;
let url: string;

beforeAll(async () => {
  server = await startServer();
  url = server.url;
});
afterAll(async () => {
  await server.close();
});

describe('idempotent submission', () => {
  it('S5 the same key and request returns the existing task, marked as not created', async () => {
    const args = { name: 'slow_compute', arguments: { seconds: 30, label: 'a' } };
    const first = await rpc(url, 'tools/call', args, { meta: { [KEY]: key('same') } });
    const second = await rpc(url, 'tools/call', args, { meta: { [KEY]: key('same') } });
    expect(first.result.resultType).toBe('task');
    expect(second.result.taskId).toBe(first.result.taskId);
    expect(first.result._meta['mcp-terminus.dev/submission']).toEqual({ created: true });
    expect(second.result._meta['mcp-terminus.dev/submission']).toEqual({ created: false });
    await rpc(url, 'tasks/cancel', { taskId: first.result.taskId });
  });

  it('S5 the same key with other arguments is -32602 submission_key_conflict and creates nothing', async () => {
    const first = await createTask(url, 'slow_compute', { seconds: 30 }, { meta: { [KEY]: key('conflict') } });
    const other = await rpc(
      url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 31 } },
      { meta: { [KEY]: key('conflict') } },
    );
    expect(other.error).toMatchObject({ code: -32602, data: { reason: 'submission_key_conflict' } });
    const lookup = await rpc(url, 'terminus/tasks/lookup', { submissionKey: key('conflict') });
    expect(lookup.result.task.taskId).toBe(first);
    await rpc(url, 'tasks/cancel', { taskId: first });
  });

  it('a key on a call that would run inline is refused rather than silently dropped', async () => {
    const inline = await rpc(
      url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0 } },
      { declare: false, meta: { [KEY]: key('inline') } },
    );
    expect(inline.error).toMatchObject({ code: -32602, data: { reason: 'submission_key_needs_task' } });
    const forbidden = await rpc(
      url,
      'tools/call',
      { name: 'greet', arguments: { name: 'x' } },
      { meta: { [KEY]: key('greet') } },
    );
    expect(forbidden.error).toMatchObject({ code: -32602, data: { reason: 'submission_key_needs_task' } });
  });
});

describe('terminus/tasks/lookup', () => {
  it('finds a task by its key with the tasks/get view', async () => {
    const taskId = await createTask(url, 'slow_compute', { seconds: 30 }, { meta: { [KEY]: key('find') } });
    const answer = await rpc(url, 'terminus/tasks/lookup', { submissionKey: key('find') });
    expect(answer.result).toMatchObject({ resultType: 'complete', found: true, task: { taskId, status: 'working' } });
    await rpc(url, 'tasks/cancel', { taskId });
  });

  it('S6 an unused key answers never-created and is burned: the original request arriving later is refused', async () => {
    const answer = await rpc(url, 'terminus/tasks/lookup', { submissionKey: key('late') });
    expect(answer.result).toEqual({
      resultType: 'complete',
      found: false,
      neverCreated: true,
      _meta: expect.any(Object),
    });
    const late = await rpc(
      url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 1 } },
      { meta: { [KEY]: key('late') } },
    );
    expect(late.error).toMatchObject({ code: -32602, data: { reason: 'submission_key_never_created' } });
    expect(late.error?.message).toContain('never created');
    const still = await rpc(url, 'terminus/tasks/lookup', { submissionKey: key('late') });
    expect(still.result.found).toBe(false);
  });

  it('a bad submissionKey parameter is -32602 naming it', async () => {
    const answer = await rpc(url, 'terminus/tasks/lookup', { submissionKey: 42 });
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.message).toContain('submissionKey');
  });
});
