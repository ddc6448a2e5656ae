/**
 * The executor end to end over the SEP-1391 and AIP-151 client wires, against our real server
 * in-process (every wire registered, bearer auth, 127.0.0.1 port 0): complete, fail, cancel while
 * working, cancel after completion, a lost submit answer settled by the key, a 404, and disabled
 * wires (no new submissions; an operation created before keeps running to its receipt).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import type { WireName } from '../../src/core/task.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import { ExecutorError, type Executor, type ExecutorOptions } from '../../src/executor/executor-types.js';
import type { Ledger } from '../../src/executor/ledger-port.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { ALICE, startWireServer, type WireServer } from '../wires/helpers.js';
import { waitFor } from './executor-helpers.js';

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server.close();
});

const OWNER = 'auth:alice';

/** A request as the fault script sees it: the HTTP path and, for JSON-RPC, the method and params. */
interface Seen {
  readonly path: string;
  readonly method: string | undefined;
  readonly params: Record<string, unknown>;
  readonly id: unknown;
}
type Fault = (seen: Seen) => 'forward' | 'drop_answer' | Response;

/** `fetch` with a fault script: forward, do the request and lose its answer, or answer for the server. */
function faultyFetch(script: { fault: Fault }): typeof fetch {
  return async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    let message: { method?: string; params?: Record<string, unknown>; id?: unknown } = {};
    if (typeof init?.body === 'string') {
      try {
        message = JSON.parse(init.body) as typeof message;
      } catch {
        // not JSON
      }
    }
    const action = script.fault({
      path: url.pathname,
      method: message.method,
      params: message.params ?? {},
      id: message.id,
    });
    if (action instanceof Response) return action;
    const response = await fetch(input, init);
    if (action === 'drop_answer') {
      await response.text();
      throw new TypeError('fetch failed (answer dropped by the test)');
    }
    return response;
  };
}

const rpcError = (id: unknown, code: number, message: string, data: unknown): Response =>
  new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, data } }), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });

const rpcResult = (id: unknown, result: unknown): Response =>
  new Response(JSON.stringify({ jsonrpc: '2.0', id, result }), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });

interface WireCase {
  readonly wire: Extract<WireName, 'sep-1391' | 'aip-151'>;
  /** The request is this wire's submission. */
  isSubmit(seen: Seen): boolean;
  /** The request reads the status or result of `taskId`. */
  readsTask(seen: Seen, taskId: string): boolean;
  /** What the server says once it lost `taskId` (expired, purged). */
  gone(seen: Seen): Response;
  /** What a key lookup says once the server lost the task, or undefined where `gone` covers it. */
  lookupAfterLoss(seen: Seen): Response | undefined;
  /** The payload of a failed receipt of `work {mode: rpc_error}`: the wire's view of the error. */
  readonly failedPayload: unknown;
}

const CASES: readonly WireCase[] = [
  {
    wire: 'sep-1391',
    isSubmit: (s) => s.method === 'tools/call',
    readsTask: (s, taskId) => s.method?.startsWith('tools/async/') === true && s.params.token === taskId,
    // L-14: a token past its keepAlive answers -32602 like an unknown one.
    gone: (s) => rpcError(s.id, -32602, 'Token expired', { reason: 'invalid_token' }),
    lookupAfterLoss: () => undefined,
    // SEP-1391 carries only a message for a failure (L-11).
    failedPayload: { code: -32603, message: 'backend refused' },
  },
  {
    wire: 'aip-151',
    isSubmit: (s) => s.path.endsWith(':run'),
    readsTask: (s, taskId) => s.path.startsWith(`/v1/operations/${taskId}`),
    gone: () =>
      new Response(JSON.stringify({ error: { code: 404, message: 'Operation not found', status: 'NOT_FOUND' } }), {
        status: 404,
        headers: { 'content-type': 'application/json' },
      }),
    lookupAfterLoss: (s) =>
      s.method === 'terminus/tasks/lookup' ? rpcResult(s.id, { found: false, neverCreated: true }) : undefined,
    failedPayload: { code: -32010, message: 'backend refused', data: { backend: 'x' } },
  },
];

async function open(
  c: WireCase,
  script: { fault: Fault },
  overrides: Partial<ExecutorOptions> = {},
): Promise<{ executor: Executor; ledger: Ledger }> {
  const ledger = overrides.ledger ?? createMemoryLedger();
  const executor = await createExecutor({
    ledger,
    connect: (_server, forced) =>
      connectServer(
        { url: server.url, headers: { authorization: `Bearer ${ALICE}` }, fetch: faultyFetch(script) },
        { clock: systemClock, wire: forced ?? c.wire, timeoutMs: 10_000 },
      ),
    clock: systemClock,
    random: systemRandom,
    ids: systemIds,
    qps: 200,
    policy: { minPollIntervalMs: 50, backoffBaseMs: 50 },
    ...overrides,
  });
  return { executor, ledger };
}

/** Tasks of alice on the server whose args carry `text`. */
async function tasksWithText(text: string) {
  const { tasks } = await server.engine.list(OWNER, { limit: 1000 });
  return tasks.filter((t) => t.args.text === text);
}

const forward = (): { fault: Fault } => ({ fault: () => 'forward' });

describe.each(CASES)('executor over $wire', (c) => {
  test('completes: one receipt with the CallToolResult; the ledger and the server record the wire', async () => {
    const { executor, ledger } = await open(c, forward());
    const text = `${c.wire}-ok`;
    try {
      const op = await executor.submit({ callNodeId: text, server: 's', tool: 'work', args: { text } });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(receipt.payload).toEqual({
        content: [{ type: 'text', text: `done ${text}` }],
        structuredContent: { ok: true },
      });
      const record = await ledger.loadByCallNode(text);
      expect(record?.wire.name).toBe(c.wire);
      const tasks = await tasksWithText(text);
      expect(tasks.map((t) => [t.wire, t.submissionKey, t.status])).toEqual([
        [c.wire, record?.submissionKey, 'completed'],
      ]);
    } finally {
      await executor.close();
    }
  });

  test('fails: a failed receipt carrying the error the wire reports', async () => {
    const { executor } = await open(c, forward());
    try {
      const op = await executor.submit({
        callNodeId: `${c.wire}-fail`,
        server: 's',
        tool: 'work',
        args: { mode: 'rpc_error' },
      });
      const receipt = await op.result();
      expect(receipt.status).toBe('failed');
      expect(receipt.payload).toEqual(c.failedPayload);
    } finally {
      await executor.close();
    }
  });

  test('cancel while working: the server task is cancelled and the receipt says cancelled', async () => {
    const { executor, ledger } = await open(c, forward());
    const gate = `${c.wire}-cancel`;
    try {
      const op = await executor.submit({
        callNodeId: gate,
        server: 's',
        tool: 'work',
        args: { mode: 'block', key: gate, text: gate },
      });
      await waitFor(async () => (await ledger.loadByCallNode(gate))?.state === 'WORKING', 'WORKING');
      expect((await op.cancel()).requested).toBe(true);
      const receipt = await op.result();
      expect(receipt.status).toBe('cancelled');
      const [task] = await tasksWithText(gate);
      expect(task?.status).toBe('cancelled');
    } finally {
      server.gates.release(gate);
      await executor.close();
    }
  });

  test('cancel after completion: the completed outcome stands, on the server and in the receipt', async () => {
    const { executor, ledger } = await open(c, forward());
    const gate = `${c.wire}-late-cancel`;
    try {
      const op = await executor.submit({
        callNodeId: gate,
        server: 's',
        tool: 'work',
        args: { mode: 'block', key: gate, text: gate },
      });
      await waitFor(async () => (await ledger.loadByCallNode(gate))?.state === 'WORKING', 'WORKING');
      server.gates.release(gate);
      await waitFor(async () => (await tasksWithText(gate))[0]?.status === 'completed', 'server completion');
      await op.cancel();
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect((await tasksWithText(gate))[0]?.status).toBe('completed');
    } finally {
      await executor.close();
    }
  });

  test('C5: a lost submit answer is settled by the key: the same task, exactly one on the server', async () => {
    let dropped = 0;
    const script = {
      fault: (s: Seen) => (c.isSubmit(s) && dropped++ === 0 ? ('drop_answer' as const) : ('forward' as const)),
    };
    const { executor, ledger } = await open(c, script);
    const text = `${c.wire}-lost-submit`;
    try {
      const op = await executor.submit({ callNodeId: text, server: 's', tool: 'work', args: { text } });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(dropped).toBe(1);
      const record = await ledger.loadByCallNode(text);
      expect(record?.evidence.map((e) => e.kind)).toContain('submit_lost');
      const tasks = await tasksWithText(text);
      expect(tasks).toHaveLength(1);
      expect(tasks[0]?.submissionKey).toBe(record?.submissionKey);
    } finally {
      await executor.close();
    }
  });

  test('404 -> not_found: a task the server lost goes UNKNOWN, never resubmitted', async () => {
    let lost: string | null = null;
    const script = {
      fault: (s: Seen): ReturnType<Fault> => {
        if (lost === null) return 'forward';
        if (c.readsTask(s, lost)) return c.gone(s);
        return c.lookupAfterLoss(s) ?? 'forward';
      },
    };
    const { executor, ledger } = await open(c, script);
    const gate = `${c.wire}-404`;
    try {
      const op = await executor.submit({
        callNodeId: gate,
        server: 's',
        tool: 'work',
        args: { mode: 'block', key: gate, text: gate },
      });
      await waitFor(async () => (await ledger.loadByCallNode(gate))?.state === 'WORKING', 'WORKING');
      lost = (await ledger.loadByCallNode(gate))!.taskId;
      const error = await op.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ExecutorError);
      expect((error as ExecutorError).code).toBe('unknown');
      const record = await ledger.loadByCallNode(gate);
      expect(record?.state).toBe('UNKNOWN');
      expect(record?.evidence.map((e) => e.kind)).toContain('not_found');
      expect(await tasksWithText(gate)).toHaveLength(1);
    } finally {
      server.gates.release(gate);
      await executor.close();
    }
  });

  test('disabled wire: new submissions refused; an operation created before still reaches its receipt', async () => {
    const ledger = createMemoryLedger();
    const gate = `${c.wire}-disabled`;
    const before = await open(c, forward(), { ledger });
    await before.executor.submit({
      callNodeId: gate,
      server: 's',
      tool: 'work',
      args: { mode: 'block', key: gate, text: gate },
    });
    await waitFor(async () => (await ledger.loadByCallNode(gate))?.state === 'WORKING', 'WORKING');
    await before.executor.close();

    const { executor } = await open(c, forward(), { ledger, disabledWires: [c.wire] });
    try {
      const refused = await executor
        .submit({ callNodeId: `${gate}-new`, server: 's', tool: 'work', args: { text: `${gate}-new` } })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(refused).toBeInstanceOf(ExecutorError);
      expect((refused as ExecutorError).code).toBe('wire_disabled');
      expect(await ledger.loadByCallNode(`${gate}-new`)).toBeNull();
      expect(await tasksWithText(`${gate}-new`)).toHaveLength(0);

      const [handle] = await executor.resume();
      expect(handle?.callNodeId).toBe(gate);
      // Re-submitting the existing call node is that operation, not a new submission.
      const same = await executor.submit({
        callNodeId: gate,
        server: 's',
        tool: 'work',
        args: { mode: 'block', key: gate, text: gate },
      });
      expect(same.operationId).toBe(handle?.operationId);
      server.gates.release(gate);
      const receipt = await handle!.result();
      expect(receipt.status).toBe('completed');
      expect(await tasksWithText(gate)).toHaveLength(1);
    } finally {
      server.gates.release(gate);
      await executor.close();
    }
  });
});
