/**
 * The executor against a real terminus server (in-process, 127.0.0.1:0) over the Tasks extension:
 * every terminal outcome ends in exactly one receipt, read from the server, never invented locally.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_OWNER } from '../../src/server/owner.js';
import type { ApprovalRequest, OperationStatus } from '../../src/executor/executor-types.js';
import { openExecutor, startServer, waitFor, type TestServer } from './executor-helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

describe('executor over the Tasks extension', () => {
  it('completes: the receipt carries the fetched result and its digest; the outbox yields it once', async () => {
    const { executor, ledger } = await openExecutor(server.url);
    try {
      const op = await executor.submit({
        callNodeId: 'n-complete',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 0.2 },
      });
      const seen: OperationStatus[] = [];
      const watching = (async () => {
        for await (const status of op.statuses()) seen.push(status);
      })();
      const receipt = await op.result();
      await watching;
      expect(receipt.status).toBe('completed');
      expect(receipt.payload).toMatchObject({ content: [{ type: 'text', text: 'slow_compute: done after 0.2 s' }] });
      expect(receipt.resultDigest).toMatch(/^[0-9a-f]{64}$/);
      const record = await ledger.loadByCallNode('n-complete');
      expect(record?.state).toBe('ACCEPTED');
      expect(record?.wire.name).toBe('mcp-tasks-ext');
      expect(seen.map((s) => s.state)).toEqual(expect.arrayContaining(['SUBMITTING', 'WORKING', 'ACCEPTED']));
      const task = await server.engine.get(ANONYMOUS_OWNER, receipt.taskId);
      expect(task.status).toBe('completed');
      const item = await executor.outbox.next();
      expect(item.receipt.id).toBe(receipt.id);
      expect(await executor.outbox.ack(receipt.id)).toBe(true);
      expect(await executor.outbox.ack(receipt.id)).toBe(false);
    } finally {
      await executor.close();
    }
  });

  it('fails: a JSON-RPC error from the tool is a failed receipt with that error', async () => {
    const { executor } = await openExecutor(server.url);
    try {
      const op = await executor.submit({ callNodeId: 'n-fail', server: 's', tool: 'protocol_error_job', args: {} });
      const receipt = await op.result();
      expect(receipt.status).toBe('failed');
      expect(receipt.payload).toMatchObject({ code: -32603, message: 'simulated internal failure' });
      const tool = await executor.submit({ callNodeId: 'n-iserror', server: 's', tool: 'failing_job', args: {} });
      const toolReceipt = await tool.result();
      // 2026-07-28: a tool result with isError is `completed` (reference 2.3).
      expect(toolReceipt.status).toBe('completed');
      expect(toolReceipt.payload).toMatchObject({ isError: true });
    } finally {
      await executor.close();
    }
  });

  it('cancel while working: CANCEL_REQUESTED first, then the server proves cancelled', async () => {
    const { executor, ledger } = await openExecutor(server.url);
    try {
      const op = await executor.submit({
        callNodeId: 'n-cancel',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 60 },
      });
      await waitFor(async () => (await ledger.loadByCallNode('n-cancel'))?.state === 'WORKING', 'WORKING');
      expect(await op.cancel()).toEqual({ requested: true });
      const receipt = await op.result();
      expect(receipt.status).toBe('cancelled');
      expect(receipt.cancelGeneration).toBe(1);
      expect((await server.engine.get(ANONYMOUS_OWNER, receipt.taskId)).status).toBe('cancelled');
      const record = await ledger.loadByCallNode('n-cancel');
      const path = record?.history.map((h) => h.to);
      expect(path).toEqual(['WORKING', 'CANCEL_REQUESTED', 'CANCELLED_ACCEPTED']);
    } finally {
      await executor.close();
    }
  });

  it('cancel after completion: the completion wins and the receipt says completed', async () => {
    // Polling only: a push of the completion would be read before the cancel is sent.
    const { executor, ledger } = await openExecutor(server.url, { listen: false });
    try {
      // quiet_job suggests a 3 s poll interval: it completes long before the executor polls again.
      const op = await executor.submit({
        callNodeId: 'n-late-cancel',
        server: 's',
        tool: 'quiet_job',
        args: { ms: 100 },
      });
      await waitFor(async () => (await ledger.loadByCallNode('n-late-cancel'))?.state === 'WORKING', 'WORKING');
      const taskId = (await ledger.loadByCallNode('n-late-cancel'))!.taskId!;
      await waitFor(
        async () => (await server.engine.get(ANONYMOUS_OWNER, taskId)).status === 'completed',
        'server completion',
      );
      expect(await op.cancel()).toEqual({ requested: true });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(receipt.payload).toMatchObject({ content: [{ text: 'quiet done' }] });
      expect((await server.engine.get(ANONYMOUS_OWNER, taskId)).status).toBe('completed');
      const path = (await ledger.loadByCallNode('n-late-cancel'))?.history.map((h) => h.to);
      expect(path).toEqual(['WORKING', 'CANCEL_REQUESTED', 'TERMINAL_OBSERVED', 'FETCHING_RESULT', 'ACCEPTED']);
    } finally {
      await executor.close();
    }
  });

  it('input round: INPUT_REQUIRED hands the request to the approval gate; the reply completes the task', async () => {
    const asked: ApprovalRequest[] = [];
    const { executor, ledger } = await openExecutor(server.url, {
      approvalGate: async (request) => {
        asked.push(request);
        return { action: 'accept', content: { confirm: true } };
      },
    });
    try {
      const op = await executor.submit({
        callNodeId: 'n-input',
        server: 's',
        tool: 'confirm_delete',
        args: { filename: 'a.txt' },
      });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(receipt.payload).toMatchObject({ content: [{ text: 'Deleted a.txt' }] });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ round: 1, callNodeId: 'n-input', tool: 'confirm_delete' });
      expect(asked[0]?.request).toMatchObject({ method: 'elicitation/create' });
      const record = await ledger.loadByCallNode('n-input');
      expect(record?.history.map((h) => h.to)).toContain('INPUT_REQUIRED');
      expect(record?.input.answeredKeys).toHaveLength(1);
    } finally {
      await executor.close();
    }
  });

  it('validateResult refusing a result: never accepted, ends in UNKNOWN with evidence', async () => {
    const { executor, ledger } = await openExecutor(server.url, {
      policy: { minPollIntervalMs: 50, backoffBaseMs: 10, maxFetchAttempts: 2 },
      validateResult: () => {
        throw new Error('looks wrong');
      },
    });
    try {
      const op = await executor.submit({
        callNodeId: 'n-invalid',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 0 },
      });
      await expect(op.result()).rejects.toMatchObject({ code: 'unknown' });
      const record = await ledger.loadByCallNode('n-invalid');
      expect(record?.state).toBe('UNKNOWN');
      expect(record?.evidence.map((e) => e.kind)).toContain('result_unverifiable');
      expect(await ledger.getReceipt('n-invalid')).toBeNull();
    } finally {
      await executor.close();
    }
  });
});
