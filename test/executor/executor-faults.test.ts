/**
 * Faults between the executor and a real terminus server, injected by an HTTP proxy on 127.0.0.1:
 * a lost submission response (resolved by key lookup, never by a second task) and 429 + Retry-After.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExecutor, startProxy, startServer, type ProxyAction, type TestServer } from './executor-helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

const forward: ProxyAction = { kind: 'forward' };

describe('executor under wire faults', () => {
  it('lost submit response: SUBMISSION_UNKNOWN, key lookup finds the same task, no second task', async () => {
    let dropped = 0;
    const proxy = await startProxy(server.url, (request) => {
      if (request.method === 'tools/call' && dropped === 0) {
        dropped += 1;
        return { kind: 'drop_response' };
      }
      return forward;
    });
    const { executor, ledger } = await openExecutor(proxy.url);
    try {
      const before = (await server.tasks()).length;
      const op = await executor.submit({
        callNodeId: 'n-lost',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 0.3, label: 'lost' },
      });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      const record = await ledger.loadByCallNode('n-lost');
      expect(record?.history.map((h) => h.to).slice(0, 2)).toEqual(['SUBMISSION_UNKNOWN', 'WORKING']);
      expect(record?.evidence[0]?.kind).toBe('submit_lost');
      expect(record?.priorSubmissionKeys).toEqual([]);
      const created = (await server.tasks()).slice(0, (await server.tasks()).length - before);
      expect(created).toHaveLength(1);
      expect(created[0]?.id).toBe(receipt.taskId);
      expect(created[0]?.submissionKey).toBe(record?.submissionKey);
      expect(proxy.seen.filter((r) => r.method === 'tools/call')).toHaveLength(1);
      expect(proxy.seen.filter((r) => r.method === 'terminus/tasks/lookup')).toHaveLength(1);
    } finally {
      await executor.close();
      await proxy.close();
    }
  });

  it('submit lost before it reached the server: the lookup proves never-created, one resubmission, one task', async () => {
    let refused = 0;
    const proxy = await startProxy(server.url, (request) => {
      if (request.method === 'tools/call' && refused === 0) {
        refused += 1;
        return { kind: 'answer', status: 502, body: '' };
      }
      return forward;
    });
    const { executor, ledger } = await openExecutor(proxy.url);
    try {
      const before = (await server.tasks()).length;
      const op = await executor.submit({
        callNodeId: 'n-never',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 0.1, label: 'never' },
      });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      const record = await ledger.loadByCallNode('n-never');
      expect(record?.history.map((h) => h.to).slice(0, 4)).toEqual([
        'SUBMISSION_UNKNOWN',
        'NOT_FOUND_SAFE',
        'SUBMITTING',
        'WORKING',
      ]);
      expect(record?.priorSubmissionKeys).toHaveLength(1);
      expect((await server.tasks()).length - before).toBe(1);
    } finally {
      await executor.close();
      await proxy.close();
    }
  });

  it('429 with Retry-After: the next poll waits at least that long, then the call completes', async () => {
    const throttledAt: number[] = [];
    const proxy = await startProxy(server.url, (request) => {
      if (request.method === 'tasks/get' && throttledAt.length < 2) {
        throttledAt.push(request.at);
        return { kind: 'answer', status: 429, headers: { 'retry-after': '1' }, body: '' };
      }
      return forward;
    });
    const { executor, ledger } = await openExecutor(proxy.url);
    try {
      const op = await executor.submit({
        callNodeId: 'n-429',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 0.1, label: 't' },
      });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      const polls = proxy.seen.filter((r) => r.method === 'tasks/get');
      expect(throttledAt).toHaveLength(2);
      // Each request after a 429 came no sooner than its Retry-After (1 s; the back-off alone is 50-100 ms).
      for (const at of throttledAt) {
        const after = polls.find((p) => p.at > at);
        expect(after).toBeDefined();
        expect(after!.at - at).toBeGreaterThanOrEqual(990);
      }
      expect((await ledger.loadByCallNode('n-429'))?.attempts.consecutiveFailures).toBe(0);
    } finally {
      await executor.close();
      await proxy.close();
    }
  });
});
