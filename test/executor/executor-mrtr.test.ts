/**
 * Issue 11, defect 1 (second half): an MRTR `input_required` answer to `tools/call` (2026-07-28,
 * SEP-2322: input asked for before any task exists) is an input round, not a refusal. The approval
 * gate answers it (C10), the call is retried with `inputResponses` under the same submission key,
 * and the task it then creates completes. Against our server's `test_tool_with_task` over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutorError, type ApprovalRequest } from '../../src/executor/executor-types.js';
import { openExecutor, startProxy, startServer, type TestServer } from './executor-helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

describe('MRTR before the task exists', () => {
  it('the pre-task question reaches the approval gate; the retried call creates one task that completes', async () => {
    const proxy = await startProxy(server.url, () => ({ kind: 'forward' }));
    const asked: ApprovalRequest[] = [];
    const { executor, ledger } = await openExecutor(proxy.url, {
      approvalGate: async (request) => {
        asked.push(request);
        return { action: 'accept', content: { name: 'Alice' } };
      },
    });
    try {
      const op = await executor.submit({ callNodeId: 'mrtr-1', server: 's', tool: 'test_tool_with_task', args: {} });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(JSON.stringify(receipt.payload)).toContain('Hello, Alice!');
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ key: 'user_name', taskId: null, callNodeId: 'mrtr-1' });
      const calls = proxy.seen.filter((r) => r.method === 'tools/call');
      expect(calls).toHaveLength(2);
      expect(calls[1]!.params.inputResponses).toEqual({ user_name: { action: 'accept', content: { name: 'Alice' } } });
      // Same key on both calls (the server never used it for the first), one task.
      const keyOf = (p: Record<string, unknown>) =>
        (p._meta as Record<string, unknown>)['mcp-terminus.dev/submissionKey'];
      expect(keyOf(calls[0]!.params)).toBe(keyOf(calls[1]!.params));
      expect((await server.tasks()).filter((t) => t.id === receipt.taskId)).toHaveLength(1);
      const record = await ledger.loadByCallNode('mrtr-1');
      expect(record?.state).toBe('ACCEPTED');
      expect(record?.preTaskInput ?? null).toBeNull();
    } finally {
      await executor.close();
      await proxy.close();
    }
  });

  // The conformance run found it: `test_tool_with_task` asks for the name again after a decline, and
  // the executor answered each round (383 rounds in 30 s with piped stdin). A question refused once
  // and asked again unchanged ends the call, NEVER_CREATED, with the evidence.
  for (const action of ['decline', 'cancel'] as const) {
    it(`a pre-task question asked again after a ${action} ends the call instead of being answered again`, async () => {
      const proxy = await startProxy(server.url, () => ({ kind: 'forward' }));
      const asked: ApprovalRequest[] = [];
      const tasksBefore = (await server.tasks()).length;
      const { executor, ledger } = await openExecutor(proxy.url, {
        approvalGate: async (request) => {
          asked.push(request);
          return { action };
        },
      });
      try {
        const op = await executor.submit({
          callNodeId: `mrtr-${action}`,
          server: 's',
          tool: 'test_tool_with_task',
          args: {},
          budgetMs: 5_000,
        });
        const error = await op.result().then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(ExecutorError);
        expect((error as ExecutorError).code).toBe('never_created');
        expect((error as ExecutorError).message).toContain('asked "user_name" ("What is your name?") again');
        // Asked once; the call went out twice (the first, the retry with the refusal), never a third time.
        expect(asked).toHaveLength(1);
        expect(proxy.seen.filter((r) => r.method === 'tools/call')).toHaveLength(2);
        const record = await ledger.loadByCallNode(`mrtr-${action}`);
        expect(record?.state).toBe('NEVER_CREATED');
        expect(record?.evidence.map((e) => e.kind)).toContain('input_asked_again');
        expect(await server.tasks()).toHaveLength(tasksBefore);
      } finally {
        await executor.close();
        await proxy.close();
      }
    });
  }
});
