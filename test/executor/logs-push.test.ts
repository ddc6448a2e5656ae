/**
 * The executor's log follower opts in to log pushes on the Tasks-extension listen stream (issue 17
 * item 2): it asks `subscriptions/listen` for `notifications["terminus/taskLogs"]` (X-67: the server
 * sends no notification type the client did not ask for), and a pushed
 * `notifications/terminus/tasks/logs` brings its next cursor read forward. Against our real server
 * on loopback HTTP, through a recording `fetch`: the follower's fallback interval is 10 minutes, so
 * the line can only come from a read the push brought forward; the recording shows the push before
 * that read, and no read between the first one and the push. A push is never trusted alone: the line
 * is what the read returned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import type { Executor } from '../../src/executor/executor-types.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { tasksExtensionWire } from '../../src/server/wire/tasks-ext/index.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { waitFor } from './executor-helpers.js';

/** Released by the test: the tool writes its second line only then. */
let release: () => void = () => undefined;
let finish: () => void = () => undefined;
const gated = defineTaskTool({
  name: 'gated_log',
  description: 'Writes a line, waits for the test, writes another, finishes.',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  pollIntervalMs: 30_000,
  handler: async (_args, ctx) => {
    await ctx.log('first line');
    await new Promise<void>((resolve) => (release = resolve));
    await ctx.log('second line');
    await new Promise<void>((resolve) => {
      finish = resolve;
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    return { content: [{ type: 'text', text: 'done' }] };
  },
});

/** What went over the wire, in order: log reads (with the texts they returned) and stream frames. */
type Seen =
  | { readonly kind: 'read'; texts: string[] }
  | { readonly kind: 'listen'; readonly logs: boolean }
  | { readonly kind: 'acked'; readonly logs: boolean }
  | { readonly kind: 'log push'; readonly taskId: string };

const seen: Seen[] = [];
const decoder = new TextDecoder();

const recording: typeof fetch = async (input, init) => {
  const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : {};
  const params = (body.params ?? {}) as Record<string, Record<string, unknown> | undefined>;
  if (body.method === 'terminus/tasks/logs') {
    const read: Seen = { kind: 'read', texts: [] };
    seen.push(read);
    const response = await fetch(input, init);
    const text = await response.clone().text();
    for (const match of text.matchAll(/"text":"([^"]*)"/g)) read.texts.push(match[1]!);
    return response;
  }
  if (body.method !== 'subscriptions/listen') return fetch(input, init);
  seen.push({ kind: 'listen', logs: params.notifications?.['terminus/taskLogs'] === true });
  const response = await fetch(input, init);
  if (response.body === null) return response;
  let buffer = '';
  const relay = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true });
      const frames = buffer.split('\n\n');
      buffer = frames.pop() ?? '';
      for (const frame of frames) {
        const data = frame
          .split('\n')
          .find((line) => line.startsWith('data:'))
          ?.slice(5);
        if (data === undefined) continue;
        const message = JSON.parse(data) as { method?: string; params?: Record<string, unknown> };
        if (message.method === 'notifications/subscriptions/acknowledged') {
          const notifications = message.params?.notifications as Record<string, unknown> | undefined;
          seen.push({ kind: 'acked', logs: notifications?.['terminus/taskLogs'] === true });
        }
        if (message.method === 'notifications/terminus/tasks/logs') {
          seen.push({ kind: 'log push', taskId: String(message.params?.taskId) });
        }
      }
      controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(relay), { status: response.status, headers: response.headers });
};

let engine: TaskEngine;
let close: () => Promise<void>;
let executor: Executor;

beforeAll(async () => {
  const store = createMemoryTaskStore();
  engine = createEngine({ store, tools: [gated], clock: systemClock, ids: systemIds, random: systemRandom });
  engine.start();
  const server = createTerminusServer({ engine, wires: [tasksExtensionWire] });
  const http = await server.serveHttp({ port: 0 });
  executor = await createExecutor({
    ledger: createMemoryLedger(),
    connect: () => connectServer({ url: http.url, fetch: recording }, { clock: systemClock }),
    clock: systemClock,
    random: systemRandom,
    ids: systemIds,
  });
  close = async () => {
    release();
    finish();
    await executor.close();
    await http.close();
    await engine.stop();
    await store.close();
  };
});
afterAll(() => close?.());

describe('the log follower on the Tasks-extension listen stream', () => {
  it('asks for log pushes (X-67), and a push brings the next cursor read forward (no 10-minute wait)', async () => {
    const op = await executor.submit({ callNodeId: 'logs-push-1', server: 'local', tool: 'gated_log', args: {} });
    const lines = op.logs({ intervalMs: 600_000 })[Symbol.asyncIterator]();
    const first = await lines.next();
    expect(first.value).toMatchObject({ seq: 1, text: 'first line' });
    // Waiting for the next line (a generator runs on only when asked): the follower's stream asks for log pushes and the server agreed, before the line is written
    // (lines before a stream opened are read by cursor, never pushed).
    const next = lines.next();
    await waitFor(
      () => seen.some((s) => s.kind === 'acked' && s.logs),
      'a listen stream acknowledging log pushes',
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; seen ${JSON.stringify(seen)}`);
    });
    expect(seen.some((s) => s.kind === 'listen' && s.logs)).toBe(true);
    const readsBefore = seen.filter((s) => s.kind === 'read').length;
    release();
    const second = await next;
    expect(second.value).toMatchObject({ seq: 2, text: 'second line' });
    // Causality: the push came first, then the read that returned the line; no read in between
    // that the 10-minute timer could have made.
    const push = seen.findIndex((s) => s.kind === 'log push');
    const read = seen.findIndex((s) => s.kind === 'read' && s.texts.includes('second line'));
    expect(push).toBeGreaterThanOrEqual(0);
    expect(read).toBeGreaterThan(push);
    expect(seen.slice(0, push).filter((s) => s.kind === 'read')).toHaveLength(readsBefore);
    await lines.return?.(undefined);
    finish();
    await op.result();
  }, 30_000);
});
