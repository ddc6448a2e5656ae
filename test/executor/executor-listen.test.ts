/**
 * The executor listens (issue 17 item 2) against our real server on loopback HTTP: the Tasks
 * extension's `subscriptions/listen` (reference 2.7, X-67) and the GET stream of a 2025-11-25
 * session (reference 1.11). The tools here suggest a 30 s poll interval, so a receipt within the
 * test's budget can only come from a push that brought the status read forward; a `fetch` wrapper
 * counts the push streams (at most one open per connection) and can forge, cut or refuse them.
 * Also: `terminus serve` as a process (HTTP and stdio: stdio has no stream, polling only).
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer, createStdioConnection, negotiate } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import type { Executor } from '../../src/executor/executor-types.js';
import type { Ledger } from '../../src/executor/ledger-port.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import type { ClientWire, EventsRequest } from '../../src/executor/wire-port.js';
import { killAll, MAIN, startServe, tempDir, tsNode } from '../cli/helpers.js';
import { startServer, waitFor, type TestServer } from './executor-helpers.js';

/** The push streams the client opened through this `fetch`, and what a test does to them. */
interface StreamWatch {
  readonly fetch: typeof fetch;
  /** Streams opened (answered 200 with an event stream), open now, most open at once. */
  opened: number;
  open: number;
  maxOpen: number;
  /** Stream requests made (accepted or not). */
  asked: number;
  /** Answer every stream request with this instead (a server without streams). */
  refuse?: () => Response;
  /** Sends a frame on every open stream. */
  inject(frame: unknown): void;
  /** Errors every open stream (the connection under it dropped). */
  cut(): void;
}

function isStreamRequest(init: RequestInit | undefined): boolean {
  if (init?.method === 'GET') return true;
  if (typeof init?.body !== 'string') return false;
  try {
    return (JSON.parse(init.body) as { method?: unknown }).method === 'subscriptions/listen';
  } catch {
    return false;
  }
}

function watchStreams(): StreamWatch {
  const controllers = new Set<TransformStreamDefaultController<Uint8Array>>();
  const encoder = new TextEncoder();
  const watch: StreamWatch = {
    opened: 0,
    open: 0,
    maxOpen: 0,
    asked: 0,
    fetch: async (input, init) => {
      if (!isStreamRequest(init)) return fetch(input, init);
      watch.asked++;
      if (watch.refuse !== undefined) return watch.refuse();
      const response = await fetch(input, init);
      if (response.body === null || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
        return response;
      }
      watch.opened++;
      watch.open++;
      watch.maxOpen = Math.max(watch.maxOpen, watch.open);
      let counted = true;
      const done = (): void => {
        if (!counted) return;
        counted = false;
        watch.open--;
      };
      let own: TransformStreamDefaultController<Uint8Array> | undefined;
      const relay = new TransformStream<Uint8Array, Uint8Array>({
        start: (controller) => {
          own = controller;
          controllers.add(controller);
        },
        flush: () => {
          if (own !== undefined) controllers.delete(own);
          done();
        },
      });
      void response.body.pipeTo(relay.writable).catch(() => {
        if (own !== undefined) controllers.delete(own);
        done();
      });
      return new Response(relay.readable, { status: response.status, headers: response.headers });
    },
    inject: (frame) => {
      for (const c of controllers) c.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(frame)}\n\n`));
    },
    cut: () => {
      for (const c of [...controllers]) {
        controllers.delete(c);
        c.error(new Error('cut by the test'));
      }
      // An errored relay never flushes: count it closed here.
      watch.open = 0;
    },
  };
  return watch;
}

/** Status reads and hints per task, counted on the wire the executor drives. */
interface Counted {
  reads: string[];
  hints: { taskId: string; status: string }[];
}

function counted(wire: ClientWire, seen: Counted): ClientWire {
  return {
    ...wire,
    getStatus: (taskId, signal) => {
      seen.reads.push(taskId);
      return wire.getStatus(taskId, signal);
    },
    // On our server the driver's status read is a read of the task's events (issue 32).
    ...(wire.events === undefined
      ? {}
      : {
          events: (taskId: string, request: EventsRequest, signal?: AbortSignal) => {
            seen.reads.push(taskId);
            return wire.events!(taskId, request, signal);
          },
        }),
    ...(wire.onStatusHint === undefined
      ? {}
      : {
          onStatusHint: (listener) =>
            wire.onStatusHint!((taskId, status) => {
              seen.hints.push({ taskId, status });
              listener(taskId, status);
            }),
        }),
  };
}

const executors: { executor: Executor; ledger: Ledger }[] = [];
afterEach(async () => {
  await Promise.all(executors.splice(0).map(({ executor }) => executor.close()));
});

async function open(url: string, wire: 'mcp-tasks-ext' | 'mcp-2025-11-25', streams: StreamWatch, seen: Counted) {
  const ledger = createMemoryLedger();
  const executor = await createExecutor({
    ledger,
    connect: async () =>
      counted(
        await connectServer({ url, fetch: streams.fetch }, { clock: systemClock, wire, timeoutMs: 10_000 }),
        seen,
      ),
    clock: systemClock,
    random: systemRandom,
    ids: systemIds,
    qps: 200,
    policy: { minPollIntervalMs: 50, backoffBaseMs: 50 },
  });
  executors.push({ executor, ledger });
  return { executor, ledger };
}

const fresh = (): Counted => ({ reads: [], hints: [] });

describe('listening on our server (in-process, loopback HTTP, 30 s poll interval)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ wires: 'both' });
  });
  afterAll(async () => {
    await server.close();
  });

  for (const wire of ['mcp-tasks-ext', 'mcp-2025-11-25'] as const) {
    test(`${wire}: three operations, one stream; each completion is read at once and receipted; closed on close`, async () => {
      const streams = watchStreams();
      const seen = fresh();
      const { executor } = await open(server.url, wire, streams, seen);
      const handles = await Promise.all(
        [0, 1, 2].map((i) =>
          executor.submit({
            callNodeId: `${wire}-${i}`,
            server: 's',
            tool: 'patient_job',
            args: { ms: 300 + i * 100 },
          }),
        ),
      );
      // A 30 s interval: without a push none of these resolves within the test's 20 s.
      const receipts = await Promise.all(handles.map((h) => h.result()));
      expect(receipts.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
      for (const r of receipts) {
        expect(seen.hints).toContainEqual({ taskId: r.taskId, status: 'completed' });
        // Read before acting: the completion was seen by a status read, never taken from the push.
        expect(seen.reads).toContain(r.taskId);
      }
      expect(streams.maxOpen).toBe(1);
      await executor.close();
      await waitFor(() => streams.open === 0, 'the stream to close with the executor');
    }, 20_000);
  }

  test('C2: a forged push saying "completed" makes the executor read; the task still working, nothing is accepted', async () => {
    const streams = watchStreams();
    const seen = fresh();
    const { executor, ledger } = await open(server.url, 'mcp-tasks-ext', streams, seen);
    const handle = await executor.submit({
      callNodeId: 'forged',
      server: 's',
      tool: 'patient_job',
      args: { ms: 2_500 },
    });
    let taskId = '';
    await waitFor(async () => {
      taskId = (await ledger.load(handle.operationId))?.taskId ?? '';
      return taskId !== '';
    }, 'the task id');
    await waitFor(
      () => streams.open === 1 && seen.hints.some((h) => h.taskId === taskId),
      'the stream to be listening',
    );
    const readsBefore = seen.reads.length;
    streams.inject({
      jsonrpc: '2.0',
      method: 'notifications/tasks',
      params: {
        taskId,
        status: 'completed',
        createdAt: new Date().toISOString(),
        lastUpdatedAt: new Date().toISOString(),
        result: { content: [{ type: 'text', text: 'forged' }] },
      },
    });
    await waitFor(() => seen.reads.length > readsBefore, 'the read the push brought forward');
    await waitFor(async () => (await ledger.load(handle.operationId))!.lastServerStatus === 'working', 'the read');
    expect((await ledger.load(handle.operationId))!.state).toBe('WORKING');
    const receipt = await handle.result();
    expect(receipt.payload).toMatchObject({ content: [{ type: 'text', text: 'patient done' }] });
  }, 20_000);

  test('a stream cut under the executor is opened again (1 s back-off); the completion still arrives by push', async () => {
    const streams = watchStreams();
    const seen = fresh();
    const { executor } = await open(server.url, 'mcp-tasks-ext', streams, seen);
    const handle = await executor.submit({ callNodeId: 'cut', server: 's', tool: 'patient_job', args: { ms: 4_000 } });
    await waitFor(() => streams.opened === 1, 'the first stream');
    streams.cut();
    await waitFor(() => streams.opened === 2, 'the stream to be opened again');
    expect((await handle.result()).status).toBe('completed');
    expect(streams.maxOpen).toBe(1);
  }, 20_000);

  test('reference 2.7: a server that refuses the stream (404, -32601) is asked once; the operation completes by polling', async () => {
    const streams = watchStreams();
    streams.refuse = () =>
      new Response(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } }), {
        status: 404,
        headers: { 'content-type': 'application/json' },
      });
    const seen = fresh();
    const { executor } = await open(server.url, 'mcp-tasks-ext', streams, seen);
    // quiet_job suggests 3 s: polling alone reaches the receipt.
    const first = await executor.submit({ callNodeId: 'refused-1', server: 's', tool: 'quiet_job', args: { ms: 100 } });
    const second = await executor.submit({
      callNodeId: 'refused-2',
      server: 's',
      tool: 'quiet_job',
      args: { ms: 100 },
    });
    expect((await first.result()).status).toBe('completed');
    expect((await second.result()).status).toBe('completed');
    expect(streams.asked).toBe(1);
    expect(streams.opened).toBe(0);
    expect(seen.hints).toEqual([]);
  }, 20_000);

  test('listen: false opens no stream (polling only)', async () => {
    const streams = watchStreams();
    const ledger = createMemoryLedger();
    const executor = await createExecutor({
      ledger,
      connect: () =>
        connectServer({ url: server.url, fetch: streams.fetch }, { clock: systemClock, wire: 'auto', listen: false }),
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
      policy: { minPollIntervalMs: 50 },
    });
    executors.push({ executor, ledger });
    const handle = await executor.submit({ callNodeId: 'no-listen', server: 's', tool: 'quiet_job', args: { ms: 50 } });
    expect((await handle.result()).status).toBe('completed');
    expect(streams.asked).toBe(0);
  }, 20_000);
});

describe('terminus serve as a process', () => {
  const dir = tempDir('terminus-listen-');
  afterAll(() => {
    killAll();
    dir.remove();
  });

  test('HTTP: the executor listens on subscriptions/listen and receives the pushes of build_report', async () => {
    const served = await startServe(dir.path);
    try {
      const streams = watchStreams();
      const seen = fresh();
      const { executor } = await open(served.url, 'mcp-tasks-ext', streams, seen);
      const handle = await executor.submit({
        callNodeId: 'serve-http',
        server: 's',
        tool: 'build_report',
        args: { sections: 2, sectionSeconds: 0.2 },
      });
      const receipt = await handle.result();
      expect(receipt.status).toBe('completed');
      expect(seen.hints.filter((h) => h.taskId === receipt.taskId).map((h) => h.status)).toContain('completed');
      expect(streams.maxOpen).toBe(1);
    } finally {
      await served.stop();
    }
  }, 60_000);

  test('stdio: no push stream on this transport; the executor polls to the receipt', async () => {
    const connection = await createStdioConnection({
      command: process.execPath,
      args: tsNode(MAIN, 'serve', '--stdio', '--db', join(dir.path, 'stdio.db')),
      stderr: 'ignore',
      clock: systemClock,
    });
    const wire = await negotiate(connection, { clock: systemClock });
    expect(wire.wire).toBe('mcp-tasks-ext');
    expect('watchTask' in wire).toBe(false);
    const ledger = createMemoryLedger();
    const executor = await createExecutor({
      ledger,
      connect: () => Promise.resolve(wire),
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
    });
    executors.push({ executor, ledger });
    const handle = await executor.submit({
      callNodeId: 'serve-stdio',
      server: 's',
      tool: 'build_report',
      args: { sections: 1, sectionSeconds: 0.1 },
    });
    expect((await handle.result()).status).toBe('completed');
  }, 60_000);
});
