/**
 * C11 (issue 11, defect 2): a wait budget belongs to a waiter, not to the operation. A waiter that
 * gives up leaves the operation in the ledger; `resume()`, `attach()` and a second `submit()` of the
 * call node each start a FRESH budget and reach the one receipt. Against a real terminus server over
 * HTTP on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import type { OperationStatus } from '../../src/executor/executor-types.js';
import { ANONYMOUS_OWNER } from '../../src/server/owner.js';
import { openExecutor, startServer, waitFor, type TestServer } from './executor-helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

/** Submits a call whose waiter gives up after 300 ms while the task runs on; returns its task id. */
async function abandoned(
  executor: Awaited<ReturnType<typeof openExecutor>>['executor'],
  callNodeId: string,
  seconds: number,
): Promise<void> {
  const op = await executor.submit({ callNodeId, server: 's', tool: 'slow_compute', args: { seconds }, budgetMs: 300 });
  expect(op.attached).toBe(false);
  await expect(op.result()).rejects.toMatchObject({ code: 'waiting_stopped' });
}

describe('C11: a later waiter starts a fresh budget', () => {
  it('resume() after the budget ran out reaches the receipt the server already has', async () => {
    const { executor, ledger } = await openExecutor(server.url);
    try {
      await abandoned(executor, 'c11-resume', 1);
      const taskId = (await ledger.loadByCallNode('c11-resume'))!.taskId!;
      await waitFor(() => server.terminal.has(taskId), 'the task finishing on its own');
      expect((await server.engine.get(ANONYMOUS_OWNER, taskId)).status).toBe('completed');
      const handles = await executor.resume({ budgetMs: 10_000 });
      const again = handles.find((h) => h.callNodeId === 'c11-resume');
      expect(again?.attached).toBe(true);
      const receipt = await again!.result();
      expect(receipt).toMatchObject({ status: 'completed', taskId });
      expect((await ledger.listOutbox(10)).filter((row) => row.callNodeId === 'c11-resume')).toHaveLength(1);
    } finally {
      await executor.close();
    }
  });

  it('a new process attach()es with its own budget; a settled call node answers its one receipt', async () => {
    const ledger = createMemoryLedger();
    const first = await openExecutor(server.url, { ledger });
    await abandoned(first.executor, 'c11-attach', 0.8);
    await first.executor.close();
    const taskId = (await ledger.loadByCallNode('c11-attach'))!.taskId!;
    // The first process's budget (300 ms) is long past when the second one starts waiting.
    await waitFor(() => server.terminal.has(taskId), 'the task finishing on its own');
    const second = await openExecutor(server.url, { ledger });
    try {
      expect(await second.executor.attach('c11-nobody')).toBeNull();
      const op = await second.executor.attach('c11-attach', { budgetMs: 10_000 });
      expect(op?.attached).toBe(true);
      const receipt = await op!.result();
      expect(receipt.status).toBe('completed');
      const settled = await second.executor.attach('c11-attach', { budgetMs: 1 });
      expect((await settled!.result()).id).toBe(receipt.id);
    } finally {
      await second.executor.close();
    }
  });

  it('submit() of a call node whose waiter gave up re-attaches with the new budget, never a second task', async () => {
    const { executor, ledger } = await openExecutor(server.url);
    try {
      await abandoned(executor, 'c11-submit', 0.8);
      const before = server.created.size;
      const op = await executor.submit({
        callNodeId: 'c11-submit',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 0.8 },
        budgetMs: 10_000,
      });
      expect(op.attached).toBe(true);
      expect((await op.result()).status).toBe('completed');
      expect(server.created.size).toBe(before);
      expect((await ledger.loadByCallNode('c11-submit'))?.state).toBe('ACCEPTED');
    } finally {
      await executor.close();
    }
  });

  it("a second waiter's short budget ends its own wait only; the first waiter still gets the receipt", async () => {
    const { executor } = await openExecutor(server.url);
    try {
      const long = await executor.submit({
        callNodeId: 'c11-two',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 1 },
        budgetMs: 10_000,
      });
      const short = await executor.attach('c11-two', { budgetMs: 200 });
      const seen: OperationStatus[] = [];
      for await (const status of short!.statuses()) seen.push(status);
      expect(seen.at(-1)?.waitingStopped).toBe(true);
      await expect(short!.result()).rejects.toMatchObject({ code: 'waiting_stopped' });
      expect((await long.result()).status).toBe('completed');
    } finally {
      await executor.close();
    }
  });
});
