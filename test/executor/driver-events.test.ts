/**
 * The executor's driver follows a task by its ordered events where the server serves them (issue
 * 32): real SQLite files (the server's task store and the client's ledger), real HTTP on
 * 127.0.0.1:0, and a counting proxy in front of the server. In WORKING, INPUT_REQUIRED and
 * CANCEL_REQUESTED it reads `terminus/tasks/events` from the cursor kept in the ledger, never
 * `tasks/get`; the one `tasks/get` of a Tasks-extension task is its result fetch, checked against
 * the terminal event's digest (C2, C13). The cursor survives a restart: no event is applied twice
 * or skipped (C6: each read one token, at the suggested interval).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import type { ApprovalRequest } from '../../src/executor/executor-types.js';
import { cursorSeq } from '../../src/executor/adapters/events.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import type { ClientWire } from '../../src/executor/wire-port.js';
import { createEngine } from '../../src/runner/engine.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { aip151Wire } from '../../src/server/wire/aip-151/index.js';
import { createRev20251125Wire } from '../../src/server/wire/rev2025-11-25/index.js';
import { tasksExtensionWire } from '../../src/server/wire/tasks-ext/index.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/open.js';
import { ROOT, tsNode } from '../cli/helpers.js';
import { openExecutor, startProxy, waitFor, type Proxy, type ProxyRequest } from './executor-helpers.js';

const EVENTS = 'terminus/tasks/events';
const CONFIRM = { type: 'object', properties: { go: { type: 'boolean' } }, required: ['go'] };

/** working (progress 1/3) -> input_required (when `ask`) -> working (progress 2/3) -> completed. */
const stagedTool = defineTaskTool({
  name: 'staged_job',
  description: 'Reports progress, may ask one question, completes.',
  inputSchema: z.object({ ms: z.number(), ask: z.boolean().optional() }),
  taskSupport: 'required',
  pollIntervalMs: 100,
  handler: async ({ ms, ask }, ctx) => {
    await ctx.progress(1, 3, 'first half');
    await sleep(ms, undefined, { signal: ctx.signal });
    if (ask === true) {
      const reply = await ctx.requestInput(CONFIRM, 'Go on?');
      if (reply.action !== 'accept') return { content: [{ type: 'text', text: 'stopped' }] };
    }
    await ctx.progress(2, 3, 'second half');
    await sleep(ms, undefined, { signal: ctx.signal });
    return { content: [{ type: 'text', text: 'staged done' }] };
  },
});

const dir = mkdtempSync(join(tmpdir(), 'terminus-driver-events-'));
let served: { url: string; close(): Promise<void> };
let proxies: Proxy[] = [];

beforeAll(async () => {
  const store = await openSqliteTaskStore({ path: join(dir, 'server.db') });
  const engine = createEngine({
    store,
    tools: [stagedTool],
    clock: systemClock,
    ids: systemIds,
    random: systemRandom,
    claimIntervalMs: 50,
  });
  engine.start();
  const server = createTerminusServer({ engine, wires: [tasksExtensionWire, createRev20251125Wire(), aip151Wire] });
  const http = await server.serveHttp({ port: 0 });
  served = {
    url: http.url,
    close: async () => {
      await http.close();
      await engine.stop();
      await store.close();
    },
  };
});
afterEach(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  proxies = [];
});
afterAll(async () => {
  await served?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A counting proxy; `answered` sees (and may rewrite) each answer. */
async function proxy(answered?: (request: ProxyRequest, body: string) => string): Promise<Proxy> {
  const p = await startProxy(served.url, () => ({ kind: 'forward' }), answered);
  proxies.push(p);
  return p;
}

/** The JSON-RPC message of an answer (a JSON body or one SSE `data:` line). */
function messageOf(body: string): { id?: unknown; result?: { events?: { seq: number }[] } } {
  const json = body.trimStart().startsWith('{') ? body : (/^data: (.*)$/m.exec(body)?.[1] ?? '{}');
  return JSON.parse(json) as ReturnType<typeof messageOf>;
}

/** `message` in the framing of `body` (JSON, or an SSE event). */
function reframe(body: string, message: unknown): string {
  const json = JSON.stringify(message);
  return body.trimStart().startsWith('{') ? json : `event: message\ndata: ${json}\n\n`;
}

/** The seqs of the events an answer carried. */
function servedSeqs(body: string): number[] {
  return (messageOf(body).result?.events ?? []).map((e) => e.seq);
}

const methods = (p: Proxy): (string | undefined)[] => p.seen.map((r) => r.method);
const accept = async (): Promise<unknown> => ({ action: 'accept', content: { go: true } });

describe('executor driver: events where the server serves them', () => {
  it('mcp-tasks-ext: working -> input_required -> working -> completed by events alone; one tasks/get, the fetch (C6, C10, C2)', async () => {
    const p = await proxy();
    const asked: ApprovalRequest[] = [];
    const ledger = openSqliteLedger({ path: join(dir, 'ledger-flow.db') });
    const { executor } = await openExecutor(p.url, {
      ledger,
      wire: 'mcp-tasks-ext',
      approvalGate: async (request) => {
        asked.push(request);
        return accept();
      },
    });
    try {
      const op = await executor.submit({
        callNodeId: 'ev-flow',
        server: 's',
        tool: 'staged_job',
        args: { ms: 300, ask: true },
      });
      const seenStatuses: string[] = [];
      const progress: string[] = [];
      for await (const status of op.statuses()) {
        if (status.serverStatus !== null && seenStatuses.at(-1) !== status.serverStatus)
          seenStatuses.push(status.serverStatus);
        const message = status.progress?.message;
        if (message !== undefined && progress.at(-1) !== message) progress.push(message);
      }
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(receipt.payload).toEqual({ content: [{ type: 'text', text: 'staged done' }] });
      expect(seenStatuses).toEqual(['working', 'input_required', 'working', 'completed']);
      expect(progress).toEqual(['first half', 'second half']);
      // The input round came from the `input_requested` event: asked once, with the server's request.
      expect(asked).toHaveLength(1);
      expect(asked[0]!.request).toMatchObject({ method: 'elicitation/create', params: { message: 'Go on?' } });
      const seen = methods(p);
      expect(seen.filter((m) => m === EVENTS).length).toBeGreaterThanOrEqual(3);
      // No status read while the task ran: the only tasks/get is the result fetch, after the last events read.
      expect(seen.filter((m) => m === 'tasks/get')).toHaveLength(1);
      expect(seen.lastIndexOf('tasks/get')).toBeGreaterThan(seen.lastIndexOf(EVENTS));
      expect(seen).toContain('tasks/update');
      const record = await ledger.load(op.operationId);
      expect(record?.eventsOff).toBeUndefined();
      expect(record?.eventCursor?.seq).toBeGreaterThanOrEqual(7);
    } finally {
      await executor.close();
      await ledger.close();
    }
  });

  it('a client restart mid-task reads on from the cursor kept in the ledger: each event served once, none skipped', async () => {
    const served: { client: number; cursor: number; seqs: number[] }[] = [];
    let client = 1;
    const p = await proxy((request, body) => {
      if (request.method === EVENTS) {
        served.push({
          client,
          cursor: cursorSeq(request.params.cursor as string | undefined) ?? -1,
          seqs: servedSeqs(body),
        });
      }
      return body;
    });
    const path = join(dir, 'ledger-restart.db');
    let ledger = openSqliteLedger({ path });
    const first = await openExecutor(p.url, { ledger, wire: 'mcp-tasks-ext' });
    const op = await first.executor.submit({
      callNodeId: 'ev-restart',
      server: 's',
      tool: 'staged_job',
      args: { ms: 600 },
    });
    await waitFor(
      async () => ((await ledger.load(op.operationId))?.eventCursor?.seq ?? 0) >= 2,
      'the first progress applied',
    );
    await first.executor.close();
    await ledger.close();
    ledger = openSqliteLedger({ path });
    const kept = (await ledger.load(op.operationId))!.eventCursor!;
    expect(kept.seq).toBeGreaterThanOrEqual(2);
    client = 2;
    const second = await openExecutor(p.url, { ledger, wire: 'mcp-tasks-ext' });
    try {
      const handles = await second.executor.resume();
      const receipt = await handles.find((h) => h.operationId === op.operationId)!.result();
      expect(receipt.status).toBe('completed');
      const after = served.filter((s) => s.client === 2);
      expect(after.length).toBeGreaterThan(0);
      // The restarted driver starts at the kept cursor, not at the first event.
      expect(after[0]!.cursor).toBe(kept.seq);
      const applied = [
        ...served.filter((s) => s.client === 1).flatMap((s) => s.seqs.filter((seq) => seq <= kept.seq)),
        ...after.flatMap((s) => s.seqs),
      ];
      const final = (await ledger.load(op.operationId))!.eventCursor!.seq;
      expect(applied).toEqual(Array.from({ length: final }, (_, i) => i + 1));
      expect(methods(p).filter((m) => m === 'tasks/get')).toHaveLength(1);
    } finally {
      await second.executor.close();
      await ledger.close();
    }
  });

  it("C13: a fetched result whose digest is not the terminal event's is not accepted (UNKNOWN, result_changed)", async () => {
    const p = await proxy((request, body) =>
      request.method === 'tasks/get' ? body.replace('staged done', 'forged done') : body,
    );
    const ledger = openSqliteLedger({ path: join(dir, 'ledger-forged.db') });
    const { executor } = await openExecutor(p.url, { ledger, wire: 'mcp-tasks-ext' });
    try {
      const op = await executor.submit({ callNodeId: 'ev-forged', server: 's', tool: 'staged_job', args: { ms: 50 } });
      await expect(op.result()).rejects.toMatchObject({ code: 'unknown' });
      const record = await ledger.load(op.operationId);
      expect(record?.state).toBe('UNKNOWN');
      expect(record?.evidence.map((e) => e.kind)).toContain('result_changed');
      expect(await ledger.getReceipt('ev-forged')).toBeNull();
      // Only the events told the digest: the forged fetch was the one status-carrying read.
      expect(methods(p).filter((m) => m === 'tasks/get')).toHaveLength(1);
    } finally {
      await executor.close();
      await ledger.close();
    }
  });

  it("mcp-2025-11-25: the working phases by events, the input round by the wire's own status read (its side channel)", async () => {
    // No proxy here: the side channel's `tasks/result` streams the question, which a buffering proxy holds back.
    const calls: string[] = [];
    const ledger = openSqliteLedger({ path: join(dir, 'ledger-2025.db') });
    const { executor } = await openExecutor(served.url, {
      ledger,
      approvalGate: accept,
      connect: async (_server, forced) => {
        const wire = await connectServer({ url: served.url }, { clock: systemClock, wire: forced ?? 'mcp-2025-11-25' });
        return {
          ...wire,
          getStatus: (taskId, signal) => (calls.push('status'), wire.getStatus(taskId, signal)),
          events: (taskId, request, signal) => (calls.push('events'), wire.events!(taskId, request, signal)),
          fetchResult: (taskId, signal, observed) => (calls.push('result'), wire.fetchResult(taskId, signal, observed)),
        } satisfies ClientWire;
      },
    });
    try {
      const op = await executor.submit({
        callNodeId: 'ev-2025',
        server: 's',
        tool: 'staged_job',
        args: { ms: 300, ask: true },
      });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(receipt.payload).toEqual({ content: [{ type: 'text', text: 'staged done' }] });
      expect(calls.filter((c) => c === 'events').length).toBeGreaterThanOrEqual(3);
      // Status reads only for the input round (its requests arrive on the side channel the read opens).
      const first = calls.indexOf('status');
      expect(first).toBeGreaterThan(0);
      expect(calls.slice(0, first).every((c) => c === 'events')).toBe(true);
      expect(calls.filter((c) => c === 'status').length).toBeLessThanOrEqual(3);
      expect(calls.at(-1)).toBe('result');
      const record = await ledger.load(op.operationId);
      expect(record?.eventsOff).toBeUndefined();
    } finally {
      await executor.close();
      await ledger.close();
    }
  });

  it('a foreign server (SDK 1.32 over stdio, no events): one events read answered -32601, then status reads as before', async () => {
    const calls: string[] = [];
    const ledger = openSqliteLedger({ path: join(dir, 'ledger-sdk132.db') });
    const { executor } = await openExecutor(served.url, {
      ledger,
      policy: { minPollIntervalMs: 100, backoffBaseMs: 100 },
      connect: async () => {
        const wire = await connectServer(
          {
            command: process.execPath,
            args: tsNode(join(ROOT, 'test/fixtures/sdk132-tasks-server.ts')),
            stderr: 'ignore',
          },
          { clock: systemClock, wire: 'auto' },
        );
        return {
          ...wire,
          getStatus: (taskId, signal) => (calls.push('status'), wire.getStatus(taskId, signal)),
          ...(wire.events === undefined
            ? {}
            : { events: (taskId, request, signal) => (calls.push('events'), wire.events!(taskId, request, signal)) }),
        } satisfies ClientWire;
      },
    });
    try {
      const op = await executor.submit({
        callNodeId: 'ev-sdk132',
        server: 'sdk',
        tool: 'sdk_complete',
        args: { ms: 600 },
      });
      expect((await op.result()).status).toBe('completed');
      expect(calls.filter((c) => c === 'events').length).toBeLessThanOrEqual(1);
      expect(calls.filter((c) => c === 'status').length).toBeGreaterThanOrEqual(2);
      const record = await ledger.load(op.operationId);
      if (calls.includes('events')) expect(record?.eventsOff).toBe(true);
      expect(record?.eventCursor ?? null).toBeNull();
    } finally {
      await executor.close();
      await ledger.close();
    }
  }, 60_000);

  it("aip-151: followed by the /events route; the fetched result matches the completion event's digest (C13)", async () => {
    const ledger = openSqliteLedger({ path: join(dir, 'ledger-aip.db') });
    const { executor } = await openExecutor(served.url, { ledger, wire: 'aip-151' });
    try {
      const op = await executor.submit({ callNodeId: 'ev-aip', server: 's', tool: 'staged_job', args: { ms: 200 } });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(receipt.payload).toEqual({ content: [{ type: 'text', text: 'staged done' }] });
      const record = await ledger.load(op.operationId);
      expect(record?.eventsOff).toBeUndefined();
      // working, progress, progress, completed: the terminal event was applied from the events.
      expect(record?.eventCursor?.seq).toBe(4);
      expect(record?.observedTerminal?.resultDigest).toBe(receipt.resultDigest);
    } finally {
      await executor.close();
      await ledger.close();
    }
  });

  it("a server that stops serving the task's events (not_found while the task is there) is followed by status reads", async () => {
    let refuse = false;
    const p = await proxy((request, body) => {
      if (request.method !== EVENTS || !refuse) return body;
      return reframe(body, {
        jsonrpc: '2.0',
        id: messageOf(body).id,
        error: { code: -32602, message: 'Task not found', data: { reason: 'task_not_found' } },
      });
    });
    const ledger = openSqliteLedger({ path: join(dir, 'ledger-fallback.db') });
    const { executor } = await openExecutor(p.url, { ledger, wire: 'mcp-tasks-ext' });
    try {
      const op = await executor.submit({
        callNodeId: 'ev-fallback',
        server: 's',
        tool: 'staged_job',
        args: { ms: 400 },
      });
      await waitFor(
        async () => ((await ledger.load(op.operationId))?.eventCursor?.seq ?? 0) >= 1,
        'an events read applied',
      );
      refuse = true;
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      const record = await ledger.load(op.operationId);
      expect(record?.eventsOff).toBe(true);
      const seen = methods(p);
      const refusedAt = seen.lastIndexOf(EVENTS);
      // One refused events read, then status reads only.
      expect(seen.slice(refusedAt + 1).filter((m) => m === EVENTS)).toHaveLength(0);
      expect(seen.slice(refusedAt + 1).filter((m) => m === 'tasks/get').length).toBeGreaterThanOrEqual(2);
    } finally {
      await executor.close();
      await ledger.close();
    }
  });
});
