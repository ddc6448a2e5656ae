/**
 * C10: one status read of an operation on the wire at a time. A waiter that re-attaches (after a
 * detach) while a read is out takes the operation up again without a second read: two answers of
 * one input round open it twice (the approval gate asked twice), and a second read queued for a
 * token goes out after the first answer paused polling (gate seeds 18026, 71076). Against a real
 * terminus server over HTTP on loopback, through a proxy that holds the first read's answer.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExecutor, startProxy, startServer, waitFor, type TestServer } from './executor-helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

describe('C10: one status read at a time', () => {
  it('a waiter re-attached while a status read is out sends no second read; the one out answers', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = true;
    // A status read is a `tasks/get`, or on our server a read of the task's events (issue 32).
    const statusRead = (method: string | undefined): boolean =>
      method === 'tasks/get' || method === 'terminus/tasks/events';
    const proxy = await startProxy(server.url, (request) =>
      statusRead(request.method) && holding ? { kind: 'hold_response', release: held } : { kind: 'forward' },
    );
    const reads = () => proxy.seen.filter((r) => statusRead(r.method)).length;
    const { executor } = await openExecutor(proxy.url, { listen: false });
    try {
      const op = await executor.submit({
        callNodeId: 'c10-one-read',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 1 },
      });
      await waitFor(() => reads() === 1, 'the first status read');
      await op.detach();
      const again = await executor.attach('c10-one-read', { budgetMs: null });
      expect(again?.attached).toBe(true);
      // Before, the re-attach's read reached the proxy at once (qps 200): 2 reads here. Waiting can
      // only let a second read arrive, never hide one.
      await sleep(500);
      expect(reads()).toBe(1);
      holding = false;
      release();
      const receipt = await again!.result();
      expect(receipt.status).toBe('completed');
    } finally {
      await executor.close();
      await proxy.close();
    }
  }, 30_000);
});
