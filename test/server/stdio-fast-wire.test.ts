import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { conformancePreflights, conformanceTools } from '../../src/tools/conformance/index.js';
import { EXT, PROTOCOL } from './helpers.js';

// Issue 31 (figure 8, stdio): the fast path answers a task method ahead of the SDK's `serveStdio`
// routing, so the request never reaches the per-connection channel the SDK forwards messages
// through (which checks every message it forwards and every answer it sends with zod), and the
// answer is written to the connection's transport directly. Counted on the channel itself: every
// instance the SDK connects is wrapped (Server.prototype.connect) to count what its channel
// delivers and sends. In process, on a real SQLite file, through an in-memory transport.

const LEGACY = '2025-11-25';

/** A transport whose inbound messages the test pushes and whose outbound ones it collects. */
class MemoryTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly sent: JSONRPCMessage[] = [];
  readonly #waiters = new Set<() => void>();

  async start(): Promise<void> {}
  async close(): Promise<void> {
    this.onclose?.();
  }
  async send(message: JSONRPCMessage): Promise<void> {
    this.sent.push(message);
    for (const wake of [...this.#waiters]) wake();
  }

  push(message: Record<string, unknown>): void {
    this.onmessage?.(message as JSONRPCMessage);
  }

  async answer(id: unknown): Promise<Record<string, unknown>> {
    const find = () => this.sent.find((m) => (m as { id?: unknown }).id === id) as Record<string, unknown> | undefined;
    const deadline = Date.now() + 10_000;
    for (let found = find(); ; found = find()) {
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no answer to ${JSON.stringify(id)}`);
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.#waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 50);
        this.#waiters.add(wake);
      });
    }
  }
}

/** What the SDK's channels delivered to their instances and sent for them, as `method` / `answer <id>` lines. */
const channel: string[] = [];
// eslint-disable-next-line @typescript-eslint/unbound-method -- restored as it was, called with .call
const connect = Server.prototype.connect;

let dir: string;
let engine: TaskEngine;
let close: () => Promise<void>;

beforeAll(async () => {
  Server.prototype.connect = async function (this: Server, transport: Transport) {
    const deliver = (transport as { deliver?: (m: JSONRPCMessage, e?: unknown) => void }).deliver;
    if (typeof deliver === 'function') {
      (transport as unknown as { deliver: typeof deliver }).deliver = (message, extra) => {
        channel.push(String((message as { method?: unknown }).method));
        deliver.call(transport, message, extra);
      };
    }
    await connect.call(this, transport);
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if (!('method' in message)) channel.push(`answer ${JSON.stringify((message as { id?: unknown }).id)}`);
      return send(message, options);
    };
  };
  dir = mkdtempSync(join(tmpdir(), 'terminus-stdio-wire-'));
  const store = await openSqliteTaskStore({ path: join(dir, 'tasks.db') });
  engine = createEngine({ store, tools: conformanceTools, clock: systemClock, ids: systemIds, claimIntervalMs: 20 });
  engine.start();
  close = async () => {
    await engine.stop();
    await store.close();
  };
});

afterAll(async () => {
  Server.prototype.connect = connect;
  await close();
  rmSync(dir, { recursive: true, force: true });
});

function serve(fastPath: boolean): MemoryTransport {
  const registry = createWireRegistry({ limits: { createsPerMinute: 0, pollsPerMinute: 0 } });
  const server = createTerminusServer({
    engine: registry.guard(engine),
    wires: registry.adapters,
    preflights: conformancePreflights,
    name: 'stdio-wire-test',
    version: '1.0.0',
  });
  const transport = new MemoryTransport();
  server.serveStdio({ transport, fastPath });
  return transport;
}

let seq = 0;
const request = (method: string, params: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: (seq += 1),
  method,
  params,
});

/** 16 `tasks/get` of `taskId` pushed at once (one turn, as 16 lines of one stdin chunk); their answers. */
async function burst(wire: MemoryTransport, make: () => Record<string, unknown>) {
  const requests = Array.from({ length: 16 }, make);
  for (const r of requests) wire.push(r);
  return Promise.all(requests.map((r) => wire.answer(r.id)));
}

/** The 2025-11-25 `initialize` exchange that pins the connection's era. */
async function initialize2025(wire: ReturnType<typeof serve>): Promise<void> {
  const init = request('initialize', {
    protocolVersion: LEGACY,
    capabilities: {},
    clientInfo: { name: 'stdio-wire-test', version: '1' },
  });
  wire.push(init);
  await wire.answer(init.id);
}

describe('stdio fast path: task methods never reach the SDK channel (issue 31, figure 8)', () => {
  it('2025-11-25: tasks/get and tasks/cancel answered without the channel delivering or sending them', async () => {
    const wire = serve(true);
    await initialize2025(wire);
    wire.push({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const call = request('tools/call', { name: 'slow_compute', arguments: { seconds: 3600 }, task: { ttl: 600_000 } });
    wire.push(call);
    const taskId = ((await wire.answer(call.id)).result as { task: { taskId: string } }).task.taskId;

    channel.length = 0;
    const answers = await burst(wire, () => request('tasks/get', { taskId }));
    expect(answers.map((a) => (a.result as { taskId?: unknown }).taskId)).toEqual(Array(16).fill(taskId));
    const cancel = request('tasks/cancel', { taskId });
    wire.push(cancel);
    expect((await wire.answer(cancel.id)).result).toMatchObject({ taskId, status: 'cancelled' });
    expect(channel).toEqual([]);
  });

  it('2026-07-28: tasks/get answered without the channel delivering or sending it', async () => {
    const wire = serve(true);
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': PROTOCOL,
      'io.modelcontextprotocol/clientInfo': { name: 'stdio-wire-test', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } },
    };
    const open = request('tools/list', { _meta: envelope });
    wire.push(open);
    await wire.answer(open.id);
    channel.length = 0;
    const answers = await burst(wire, () => request('tasks/get', { taskId: 'no-such-task', _meta: envelope }));
    expect(answers.every((a) => (a.error as { code?: unknown } | undefined)?.code === -32602)).toBe(true);
    expect(channel).toEqual([]);
  });

  it('without the fast path every tasks/get goes through the channel (the count sees them)', async () => {
    const wire = serve(false);
    await initialize2025(wire);
    channel.length = 0;
    const answers = await burst(wire, () => request('tasks/get', { taskId: 'no-such-task' }));
    expect(answers).toHaveLength(16);
    expect(channel.filter((line) => line === 'tasks/get')).toHaveLength(16);
    expect(channel.filter((line) => line.startsWith('answer '))).toHaveLength(16);
  });
});
