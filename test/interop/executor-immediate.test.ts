/**
 * C12 (issue 11, defect 1): a synchronous `CallToolResult` answer to a call that offered a task is
 * the operation's terminal result: verified, receipted (`immediate: true`), one outbox row, state
 * ACCEPTED, status `completed` (a tool error stays `completed` with `isError: true`). On the
 * 2025-11-25 wire no `params.task` goes to a server without `tasks.requests.tools.call` (T-08) or to
 * a tool whose `execution.taskSupport` is absent or `forbidden` (T-09). Against our server (both MCP
 * wires) and a foreign one: an SDK 2.4 `McpServer` with plain tools over HTTP, and
 * server-everything's plain `echo` over stdio.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { toWebRequest, writeWebResponse } from '../../src/server/http/node-bridge.js';
import { openExecutor, startProxy, startServer, type TestServer } from '../executor/executor-helpers.js';
import { EVERYTHING, tempDir } from '../cli/helpers.js';

let ours: TestServer;
let legacy: TestServer;
let plain: { url: string; calls: Record<string, unknown>[]; close(): Promise<void> };
const dir = tempDir('terminus-immediate-');

/** An SDK 2.4 server with two plain tools (no tasks capability), served over node:http. */
async function startPlainServer(): Promise<typeof plain> {
  const calls: Record<string, unknown>[] = [];
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'plain-sdk24', version: '1.0.0' });
    server.registerTool('add', { inputSchema: z.object({ a: z.number(), b: z.number() }) }, async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
    }));
    server.registerTool('refuse', { inputSchema: z.object({}) }, async () => ({
      content: [{ type: 'text', text: 'no: simulated tool error' }],
      isError: true,
    }));
    return server;
  });
  const http: Server = createServer((req, res) => {
    void (async () => {
      const { request, body: raw } = await toWebRequest(req, new AbortController().signal, 1 << 20);
      const body =
        raw === undefined ? null : (JSON.parse(raw.toString('utf8')) as { method?: string; params?: object });
      if (body?.method === 'tools/call') calls.push({ ...body.params });
      await writeWebResponse(res, await handler.fetch(request));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

beforeAll(async () => {
  [ours, legacy, plain] = await Promise.all([startServer(), startServer({ wires: 'legacy' }), startPlainServer()]);
});
afterAll(async () => {
  await Promise.all([ours.close(), legacy.close(), plain.close()]);
  dir.remove();
});

describe('C12: a synchronous answer is the terminal result', () => {
  it('our server, Tasks extension: a forbidden tool answered inline is ACCEPTED with an immediate receipt', async () => {
    const { executor, ledger } = await openExecutor(ours.url);
    try {
      const op = await executor.submit({ callNodeId: 'i-greet', server: 's', tool: 'greet', args: { name: 'Ada' } });
      const receipt = await op.result();
      expect(receipt).toMatchObject({ status: 'completed', immediate: true, taskId: '' });
      expect(JSON.stringify(receipt.payload)).toContain('Hello, Ada!');
      const record = await ledger.loadByCallNode('i-greet');
      expect(record?.state).toBe('ACCEPTED');
      expect(record?.resultDigest).toBe(receipt.resultDigest);
      expect((await ledger.listOutbox(10)).filter((row) => row.callNodeId === 'i-greet')).toHaveLength(1);
    } finally {
      await executor.close();
    }
  });

  it('our server, 2025-11-25: no params.task for a forbidden tool (T-09), a task for an optional one', async () => {
    const proxy = await startProxy(legacy.url, () => ({ kind: 'forward' }));
    const { executor } = await openExecutor(proxy.url, { wire: 'mcp-2025-11-25' });
    try {
      const greet = await executor.submit({
        callNodeId: 'i-l-greet',
        server: 's',
        tool: 'greet',
        args: { name: 'Bo' },
      });
      expect(await greet.result()).toMatchObject({ status: 'completed', immediate: true });
      const slow = await executor.submit({
        callNodeId: 'i-l-slow',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 0 },
      });
      const receipt = await slow.result();
      expect(receipt.immediate).toBeUndefined();
      expect(receipt.taskId).not.toBe('');
      const calls = proxy.seen.filter((r) => r.method === 'tools/call');
      expect(calls.find((c) => c.params.name === 'greet')?.params).not.toHaveProperty('task');
      expect(calls.find((c) => c.params.name === 'slow_compute')?.params).toHaveProperty('task');
    } finally {
      await executor.close();
      await proxy.close();
    }
  });

  it('a foreign SDK 2.4 server with plain tools: called plainly (T-08), receipted in a SQLite ledger', async () => {
    const ledger = openSqliteLedger({ path: join(dir.path, 'plain.db') });
    const { executor } = await openExecutor(plain.url, { ledger });
    try {
      const op = await executor.submit({ callNodeId: 'i-add', server: 'p', tool: 'add', args: { a: 2, b: 3 } });
      const receipt = await op.result();
      expect(receipt).toMatchObject({ status: 'completed', immediate: true });
      expect(receipt.payload).toMatchObject({ content: [{ type: 'text', text: '5' }] });
      const refused = await executor.submit({ callNodeId: 'i-refuse', server: 'p', tool: 'refuse', args: {} });
      expect(await refused.result()).toMatchObject({
        status: 'completed',
        immediate: true,
        payload: { isError: true },
      });
      expect(plain.calls.length).toBeGreaterThanOrEqual(2);
      for (const call of plain.calls) expect(call).not.toHaveProperty('task');
      expect(await ledger.getReceipt('i-add')).toMatchObject({ immediate: true, status: 'completed' });
      expect(await ledger.listOutbox(10)).toHaveLength(2);
    } finally {
      await executor.close();
      await ledger.close();
    }
  });

  it('a synchronous answer that validateResult refuses is in doubt (UNKNOWN), never NEVER_CREATED', async () => {
    const { executor, ledger } = await openExecutor(plain.url, {
      validateResult: () => {
        throw new Error('not what we asked for');
      },
    });
    try {
      const op = await executor.submit({ callNodeId: 'i-bad', server: 'p', tool: 'add', args: { a: 1, b: 1 } });
      await expect(op.result()).rejects.toMatchObject({ code: 'unknown' });
      const record = await ledger.loadByCallNode('i-bad');
      expect(record?.state).toBe('UNKNOWN');
      expect(record?.evidence.map((e) => e.kind)).toContain('result_unverifiable');
      expect(await ledger.getReceipt('i-bad')).toBeNull();
    } finally {
      await executor.close();
    }
  });

  it('server-everything over stdio: its plain echo tool gets no params.task and an immediate receipt', async () => {
    const ledger = createMemoryLedger();
    const executor = await createExecutor({
      ledger,
      connect: () =>
        connectServer(
          { command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' },
          { clock: systemClock, timeoutMs: 20_000 },
        ),
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
    });
    try {
      const op = await executor.submit({ callNodeId: 'i-echo', server: 'e', tool: 'echo', args: { message: 'hi' } });
      const receipt = await op.result();
      expect(receipt).toMatchObject({ status: 'completed', immediate: true });
      expect(JSON.stringify(receipt.payload)).toContain('hi');
    } finally {
      await executor.close();
    }
  }, 60_000);
});
