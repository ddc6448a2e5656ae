/**
 * Local control of operations against a real terminus server: detach and the wait budget stop local
 * waiting only (C9), rollback hands in-flight items to the next epoch, shadow mode and the rollout
 * percentage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { ANONYMOUS_OWNER } from '../../src/server/owner.js';
import { openExecutor, startServer, waitFor, type TestServer } from './executor-helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

describe('stopping local waiting (C9)', () => {
  it('detach stops waiting without a server cancel; resume() re-attaches and gets the receipt', async () => {
    const { executor, ledger } = await openExecutor(server.url);
    try {
      const op = await executor.submit({
        callNodeId: 'c-detach',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 0.8 },
      });
      await waitFor(async () => (await ledger.loadByCallNode('c-detach'))?.state === 'WORKING', 'WORKING');
      const taskId = (await ledger.loadByCallNode('c-detach'))!.taskId!;
      await op.detach();
      await expect(op.result()).rejects.toMatchObject({ code: 'waiting_stopped' });
      expect((await ledger.loadByCallNode('c-detach'))?.waitingStoppedAt).not.toBeNull();
      await waitFor(() => server.terminal.has(taskId), 'the task finishing on its own');
      expect((await server.engine.get(ANONYMOUS_OWNER, taskId)).status).toBe('completed');
      expect((await ledger.loadByCallNode('c-detach'))?.state).toBe('WORKING');
      const [again] = await executor.resume();
      expect(again?.callNodeId).toBe('c-detach');
      expect((await again!.result()).status).toBe('completed');
    } finally {
      await executor.close();
    }
  });

  it('an exhausted wait budget stops waiting; the server task keeps working (no cancel is sent)', async () => {
    const { executor, ledger } = await openExecutor(server.url);
    try {
      const op = await executor.submit({
        callNodeId: 'c-budget',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 30 },
        budgetMs: 400,
      });
      await expect(op.result()).rejects.toMatchObject({ code: 'waiting_stopped' });
      const record = await ledger.loadByCallNode('c-budget');
      expect(record?.state).toBe('WORKING');
      expect(record?.attempts.cancel).toBe(0);
      expect((await server.engine.get(ANONYMOUS_OWNER, record!.taskId!)).status).toBe('working');
      await server.engine.cancel(ANONYMOUS_OWNER, record!.taskId!);
    } finally {
      await executor.close();
    }
  });
});

describe('rollout and rollback', () => {
  it('rollback stops new submissions and bumps the epoch; the next executor adopts the in-flight item', async () => {
    const ledger = createMemoryLedger();
    const a = await openExecutor(server.url, { ledger });
    const op = await a.executor.submit({
      callNodeId: 'c-rollback',
      server: 's',
      tool: 'slow_compute',
      args: { seconds: 0.3 },
    });
    await waitFor(async () => (await ledger.loadByCallNode('c-rollback'))?.state === 'WORKING', 'WORKING');
    expect(await a.executor.rollback()).toBe(1);
    await expect(op.result()).rejects.toMatchObject({ code: 'rolled_back' });
    await expect(
      a.executor.submit({ callNodeId: 'c-new', server: 's', tool: 'slow_compute', args: { seconds: 0 } }),
    ).rejects.toMatchObject({ code: 'rolled_back' });
    await a.executor.close();

    const b = await openExecutor(server.url, { ledger });
    try {
      expect(b.executor.epoch).toBe(1);
      const [adopted] = await b.executor.resume();
      const receipt = await adopted!.result();
      expect(receipt.status).toBe('completed');
      expect(receipt.epoch).toBe(1);
      expect(await ledger.loadByCallNode('c-new')).toBeNull();
    } finally {
      await b.executor.close();
    }
  });

  it('shadow tools are receipted but never reach the outbox', async () => {
    const { executor, ledger } = await openExecutor(server.url, { shadow: (tool) => tool === 'slow_compute' });
    try {
      const receipt = await (
        await executor.submit({ callNodeId: 'c-shadow', server: 's', tool: 'slow_compute', args: { seconds: 0 } })
      ).result();
      expect(receipt.shadow).toBe(true);
      expect((await ledger.loadByCallNode('c-shadow'))?.shadow).toBe(true);
      expect(await ledger.listOutbox(10)).toEqual([]);
      const normal = await (
        await executor.submit({ callNodeId: 'c-normal', server: 's', tool: 'failing_job', args: {} })
      ).result();
      expect((await executor.outbox.next()).receipt.id).toBe(normal.id);
    } finally {
      await executor.close();
    }
  });

  it('rolloutPercent takes a stable share of call nodes and refuses the others', async () => {
    const none = await openExecutor(server.url, { rolloutPercent: 0 });
    await expect(
      none.executor.submit({ callNodeId: 'c-out', server: 's', tool: 'slow_compute', args: { seconds: 0 } }),
    ).rejects.toMatchObject({ code: 'not_in_rollout' });
    await none.executor.close();

    const half = await openExecutor(server.url, { rolloutPercent: 50 });
    try {
      const decisions = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          try {
            const op = await half.executor.submit({
              callNodeId: `c-roll-${i}`,
              server: 's',
              tool: 'slow_compute',
              args: { seconds: 0 },
            });
            await op.result();
            return true;
          } catch (error) {
            expect(error).toMatchObject({ code: 'not_in_rollout' });
            return false;
          }
        }),
      );
      const taken = decisions.filter(Boolean).length;
      expect(taken).toBeGreaterThan(5);
      expect(taken).toBeLessThan(35);
      // The same call node always gets the same answer.
      const out = decisions.indexOf(false);
      await expect(
        half.executor.submit({ callNodeId: `c-roll-${out}`, server: 's', tool: 'slow_compute', args: { seconds: 0 } }),
      ).rejects.toMatchObject({ code: 'not_in_rollout' });
    } finally {
      await half.executor.close();
    }
  });

  it('C5: a duplicate or retried submit of a call node never makes a second operation or task', async () => {
    const { executor, ledger } = await openExecutor(server.url);
    try {
      const input = { callNodeId: 'c-dup', server: 's', tool: 'slow_compute', args: { seconds: 0.1, label: 'dup' } };
      const [a, b] = await Promise.all([executor.submit(input), executor.submit(input)]);
      expect(a.operationId).toBe(b.operationId);
      const receipt = await a.result();
      expect((await b.result()).id).toBe(receipt.id);
      const again = await executor.submit(input);
      expect(again.operationId).toBe(a.operationId);
      expect((await again.result()).id).toBe(receipt.id);
      await expect(executor.submit({ ...input, args: { seconds: 1, label: 'other' } })).rejects.toMatchObject({
        code: 'operation_conflict',
      });
      expect((await server.tasks()).filter((t) => t.args.label === 'dup')).toHaveLength(1);
      expect(await ledger.listOutbox(10)).toHaveLength(1);
    } finally {
      await executor.close();
    }
  });
});
