/**
 * The 2025-11-25 client adapter and wire negotiation against an in-process terminus server that
 * serves the 2025-11-25 tasks (its stateless legacy HTTP leg), driven through the executor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import type { ApprovalRequest } from '../../src/executor/executor-types.js';
import { openExecutor, startServer, waitFor, type TestServer } from './executor-helpers.js';

let both: TestServer;
let legacyOnly: TestServer;

beforeAll(async () => {
  both = await startServer({ wires: 'both' });
  legacyOnly = await startServer({ wires: 'legacy' });
});
afterAll(async () => {
  await both.close();
  await legacyOnly.close();
});

describe('wire negotiation', () => {
  it('auto picks the Tasks extension when server/discover advertises it, else 2025-11-25 tasks', async () => {
    const modern = await connectServer({ url: both.url }, { clock: systemClock });
    const legacy = await connectServer({ url: legacyOnly.url }, { clock: systemClock });
    const forced = await connectServer({ url: both.url }, { clock: systemClock, wire: 'mcp-2025-11-25' });
    try {
      expect(modern.wire).toBe('mcp-tasks-ext');
      expect(legacy.wire).toBe('mcp-2025-11-25');
      expect(forced.wire).toBe('mcp-2025-11-25');
    } finally {
      await Promise.all([modern.close(), legacy.close(), forced.close()]);
    }
  });
});

describe('executor over the 2025-11-25 tasks', () => {
  it('completes through tasks/get + tasks/result; the ledger records the wire', async () => {
    const { executor, ledger } = await openExecutor(legacyOnly.url);
    try {
      const op = await executor.submit({
        callNodeId: 'l-complete',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 0.1 },
      });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(receipt.payload).toEqual({ content: [{ type: 'text', text: 'slow_compute: done after 0.1 s' }] });
      const record = await ledger.loadByCallNode('l-complete');
      expect(record?.wire).toEqual({ name: 'mcp-2025-11-25', adapterVersion: 'rev2025-11-25-client/1' });
      expect(legacyOnly.created.has(receipt.taskId)).toBe(true);
    } finally {
      await executor.close();
    }
  });

  it('fails: a tool error (isError) and a JSON-RPC error are both failed receipts carrying an error', async () => {
    const { executor } = await openExecutor(legacyOnly.url);
    try {
      const rpc = await (
        await executor.submit({ callNodeId: 'l-rpc', server: 's', tool: 'protocol_error_job', args: {} })
      ).result();
      expect(rpc.status).toBe('failed');
      expect(rpc.payload).toMatchObject({ code: -32603, message: 'simulated internal failure' });
      const tool = await (
        await executor.submit({ callNodeId: 'l-tool', server: 's', tool: 'failing_job', args: {} })
      ).result();
      expect(tool.status).toBe('failed');
      expect(tool.payload).toMatchObject({ data: { callToolResult: { isError: true } } });
    } finally {
      await executor.close();
    }
  });

  it('cancel while working: the tasks/cancel answer proves cancelled', async () => {
    const { executor, ledger } = await openExecutor(legacyOnly.url);
    try {
      const op = await executor.submit({
        callNodeId: 'l-cancel',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 60 },
      });
      await waitFor(async () => (await ledger.loadByCallNode('l-cancel'))?.state === 'WORKING', 'WORKING');
      expect(await op.cancel()).toEqual({ requested: true });
      const receipt = await op.result();
      expect(receipt.status).toBe('cancelled');
      expect((await ledger.loadByCallNode('l-cancel'))?.history.map((h) => h.to)).toEqual([
        'WORKING',
        'CANCEL_REQUESTED',
        'CANCELLED_ACCEPTED',
      ]);
    } finally {
      await executor.close();
    }
  });

  it('cancel after completion: -32602 is read as already terminal and the completion is accepted', async () => {
    // Polling only: a push of the completion on the GET stream would be read before the cancel is sent.
    const { executor, ledger } = await openExecutor(legacyOnly.url, { listen: false });
    try {
      const op = await executor.submit({ callNodeId: 'l-late', server: 's', tool: 'quiet_job', args: { ms: 50 } });
      await waitFor(async () => (await ledger.loadByCallNode('l-late'))?.state === 'WORKING', 'WORKING');
      const taskId = (await ledger.loadByCallNode('l-late'))!.taskId!;
      await waitFor(() => legacyOnly.terminal.has(taskId), 'completion');
      expect(await op.cancel()).toEqual({ requested: true });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect((await ledger.loadByCallNode('l-late'))?.history.map((h) => h.to)).toEqual([
        'WORKING',
        'CANCEL_REQUESTED',
        'TERMINAL_OBSERVED',
        'FETCHING_RESULT',
        'ACCEPTED',
      ]);
    } finally {
      await executor.close();
    }
  });

  it('input round: the elicitation sent on the open tasks/result reaches the gate, the reply the tool', async () => {
    const asked: ApprovalRequest[] = [];
    const { executor, ledger } = await openExecutor(legacyOnly.url, {
      approvalGate: async (request) => {
        asked.push(request);
        return { action: 'accept', content: { confirm: true } };
      },
    });
    try {
      const op = await executor.submit({
        callNodeId: 'l-input',
        server: 's',
        tool: 'confirm_delete',
        args: { filename: 'b.txt' },
      });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(receipt.payload).toEqual({ content: [{ type: 'text', text: 'Deleted b.txt' }] });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ round: 1, callNodeId: 'l-input', tool: 'confirm_delete' });
      expect(asked[0]?.request).toMatchObject({ method: 'elicitation/create', params: { message: 'Delete b.txt?' } });
      // The related-task tag is framing, not part of the question shown to the gate.
      expect(JSON.stringify(asked[0]?.request)).not.toContain('related-task');
      const record = await ledger.loadByCallNode('l-input');
      expect(record?.history.map((h) => h.to)).toEqual([
        'WORKING',
        'INPUT_REQUIRED',
        'WORKING',
        'TERMINAL_OBSERVED',
        'FETCHING_RESULT',
        'ACCEPTED',
      ]);
      expect(record?.input.answeredKeys).toEqual([asked[0]?.key]);
    } finally {
      await executor.close();
    }
  });

  it('input round with two questions: each is answered once and both answers reach the tool', async () => {
    const asked: ApprovalRequest[] = [];
    const { executor } = await openExecutor(legacyOnly.url, {
      approvalGate: async (request) => {
        asked.push(request);
        const message = JSON.stringify(request.request);
        return { action: 'accept', content: { name: message.includes('First') ? 'ada' : 'bob', confirm: true } };
      },
    });
    try {
      const op = await executor.submit({ callNodeId: 'l-multi', server: 's', tool: 'multi_input', args: {} });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(receipt.payload).toEqual({ content: [{ type: 'text', text: 'Answers: ada, bob' }] });
      expect(new Set(asked.map((a) => a.key)).size).toBe(asked.length);
      expect(asked).toHaveLength(2);
    } finally {
      await executor.close();
    }
  });

  it('no key lookup on this wire: lookupKey answers unsupported (-32601), never a guess', async () => {
    const wire = await connectServer({ url: legacyOnly.url }, { clock: systemClock, wire: 'mcp-2025-11-25' });
    try {
      expect(await wire.lookupKey('any-key')).toEqual({ kind: 'unsupported' });
    } finally {
      await wire.close();
    }
  });
});
