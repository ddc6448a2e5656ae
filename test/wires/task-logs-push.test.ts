import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { LISTEN_LOGS_KEY, LOGS_METHOD, LOGS_NOTIFICATION } from '../../src/server/task-logs.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { createTask, EXT, PROTOCOL, rpc } from '../server/helpers.js';
import { ALICE, LegacySession, authenticate, eventually, sseMessages, type Json } from './helpers.js';

/**
 * Issue 18, push: `notifications/terminus/tasks/logs` on the Tasks-extension listen stream (opt-in,
 * X-67) and on the 2025-11-25 GET stream; a follower that reads by cursor and takes pushes sees
 * every line exactly once, across a disconnect.
 */

/** Lines a test feeds to a running `fed` task, one `ctx.log` per line; `null` ends the task. */
class Feeder {
  readonly #queues = new Map<string, (string | null)[]>();
  readonly #waiters = new Map<string, () => void>();

  feed(key: string, ...lines: (string | null)[]): void {
    const queue = this.#queues.get(key) ?? [];
    queue.push(...lines);
    this.#queues.set(key, queue);
    this.#waiters.get(key)?.();
  }

  async next(key: string, signal: AbortSignal): Promise<string | null> {
    for (;;) {
      const queue = this.#queues.get(key) ?? [];
      if (queue.length > 0) return queue.shift() as string | null;
      await new Promise<void>((resolve, reject) => {
        this.#waiters.set(key, resolve);
        signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      });
    }
  }
}

const feeder = new Feeder();
const fed = defineTaskTool({
  name: 'fed',
  description: 'logs what the test feeds it',
  inputSchema: z.object({ key: z.string() }),
  pollIntervalMs: 50,
  handler: async ({ key }, ctx) => {
    for (let line = await feeder.next(key, ctx.signal); line !== null; line = await feeder.next(key, ctx.signal)) {
      await ctx.log(line);
    }
    return { content: [{ type: 'text', text: 'fed' }] };
  },
});

const store = createMemoryTaskStore();
const engine = createEngine({ store, tools: [fed], clock: systemClock, ids: systemIds, claimIntervalMs: 20 });
let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  engine.start();
  const registry = createWireRegistry({ disabled: [] });
  server = await createTerminusServer({ engine, wires: registry.adapters }).serveHttp({ port: 0, authenticate });
});
afterAll(async () => {
  await server.close();
  await engine.stop();
  await store.close();
});

interface Stream {
  readonly frames: Json[];
  waitFor(done: (frames: Json[]) => boolean): Promise<void>;
  close(): void;
}

/** A `subscriptions/listen` stream for `taskIds`, read as frames arrive. */
async function listen(taskIds: string[], withLogs: boolean): Promise<Stream> {
  const controller = new AbortController();
  const response = await fetch(server.url, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL,
      'mcp-method': 'subscriptions/listen',
      authorization: `Bearer ${ALICE}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'sub-logs',
      method: 'subscriptions/listen',
      params: {
        notifications: { taskIds, ...(withLogs ? { [LISTEN_LOGS_KEY]: true } : {}) },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': PROTOCOL,
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } },
        },
      },
    }),
  });
  expect(response.status).toBe(200);
  const frames: Json[] = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += value;
        const parts = buffer.split('\n\n');
        buffer = parts.pop() ?? '';
        frames.push(...sseMessages(parts.join('\n\n')));
      }
    } catch {
      // closed by the test
    }
  })();
  const stream: Stream = {
    frames,
    waitFor: async (done) => {
      await eventually(
        async () => frames,
        (f) => done(f),
      );
    },
    close: () => controller.abort(),
  };
  await stream.waitFor((f) => f.some((m) => m.method === 'notifications/subscriptions/acknowledged'));
  return stream;
}

/**
 * The follower a client is: accepts a line only when it is the next seq after its cursor; a push
 * that leaves a gap (lines written while it was away) makes it read by cursor first.
 */
class Follower {
  cursor: number;
  readonly lines: { seq: number; text: string; via: 'read' | 'push' }[] = [];
  #pushesSeen = 0;

  constructor(
    readonly taskId: string,
    cursor = 0,
  ) {
    this.cursor = cursor;
  }

  async read(): Promise<boolean> {
    for (;;) {
      const page = (await rpc(server.url, LOGS_METHOD, { taskId: this.taskId, after: this.cursor }, { token: ALICE }))
        .result;
      for (const line of page.lines) this.#accept(line, 'read');
      if (page.lines.length === 0 || page.next === this.cursor) return page.done as boolean;
    }
  }

  async takePushes(stream: Stream): Promise<void> {
    const pushes = stream.frames.filter((f) => f.method === LOGS_NOTIFICATION).slice(this.#pushesSeen);
    this.#pushesSeen += pushes.length;
    for (const push of pushes) {
      expect(push.params.taskId).toBe(this.taskId);
      expect(push.params._meta['io.modelcontextprotocol/subscriptionId']).toBe('sub-logs');
      if (push.params.lines[0].seq > this.cursor + 1) await this.read();
      for (const line of push.params.lines) this.#accept(line, 'push');
    }
  }

  resetPushes(): void {
    this.#pushesSeen = 0;
  }

  #accept(line: { seq: number; text: string }, via: 'read' | 'push'): void {
    if (line.seq !== this.cursor + 1) return; // seen already (or before the cursor)
    this.lines.push({ seq: line.seq, text: line.text, via });
    this.cursor = line.seq;
  }
}

describe('push on the Tasks-extension listen stream', () => {
  test('a follower that disconnects and reconnects with its cursor sees every line exactly once', async () => {
    const taskId = await createTask(server.url, 'fed', { key: 'ext' }, { token: ALICE });
    feeder.feed('ext', 'l1', 'l2', 'l3');
    await eventually(
      () => engine.readLog('auth:alice', taskId, {}),
      (p) => p.lines.length === 3,
    );
    const follower = new Follower(taskId);
    let stream = await listen([taskId], true);
    expect(stream.frames[0].params.notifications).toEqual({ taskIds: [taskId], [LISTEN_LOGS_KEY]: true });
    await follower.read();
    expect(follower.cursor).toBe(3);

    feeder.feed('ext', 'l4', 'l5', 'l6');
    await eventually(
      async () => {
        await follower.takePushes(stream);
        return follower.cursor;
      },
      (c) => c === 6,
    );
    stream.close();

    // Away: three lines nobody pushes to this follower.
    feeder.feed('ext', 'l7', 'l8', 'l9');
    await eventually(
      () => engine.readLog('auth:alice', taskId, {}),
      (p) => p.lines.length === 9,
    );
    follower.resetPushes();
    stream = await listen([taskId], true);
    await follower.read();
    expect(follower.cursor).toBe(9);
    feeder.feed('ext', 'l10', 'l11', 'l12', null);
    await eventually(
      async () => {
        await follower.takePushes(stream);
        return follower.cursor;
      },
      (c) => c === 12,
    );
    expect(await follower.read()).toBe(true); // done: terminal and nothing after 12
    stream.close();

    expect(follower.lines.map((l) => [l.seq, l.text])).toEqual(
      Array.from({ length: 12 }, (_, i) => [i + 1, `l${i + 1}`]),
    );
    // Lines written while the follower listened came by push; the rest by cursor.
    expect(follower.lines.filter((l) => l.via === 'push').map((l) => l.seq)).toEqual([4, 5, 6, 10, 11, 12]);
  });

  test('X-67: a stream that did not ask for logs gets no log notifications', async () => {
    const taskId = await createTask(server.url, 'fed', { key: 'plain' }, { token: ALICE });
    const plain = await listen([taskId], false);
    const asked = await listen([taskId], true);
    expect(plain.frames[0].params.notifications).toEqual({ taskIds: [taskId] });
    feeder.feed('plain', 'only line');
    await asked.waitFor((f) => f.some((m) => m.method === LOGS_NOTIFICATION));
    feeder.feed('plain', null);
    await plain.waitFor((f) => f.some((m) => m.method === 'notifications/tasks' && m.params.status === 'completed'));
    expect(plain.frames.filter((m) => m.method === LOGS_NOTIFICATION)).toEqual([]);
    expect(asked.frames.find((m) => m.method === LOGS_NOTIFICATION).params.lines).toMatchObject([
      { seq: 1, epoch: 1, stream: 'log', text: 'only line' },
    ]);
    plain.close();
    asked.close();
  });
});

describe('push on the 2025-11-25 GET stream', () => {
  test('each line of a task created on the session once, in seq order, before its terminal status', async () => {
    const session = await LegacySession.open(server.url, ALICE);
    const get = await session.openStream();
    const created = await session.request('tools/call', { name: 'fed', arguments: { key: 'rev' }, task: {} });
    const taskId = created.result.task.taskId as string;
    feeder.feed('rev', 'a', 'b');
    await eventually(
      async () => get.messages.filter((m) => m.method === LOGS_NOTIFICATION).flatMap((m) => m.params.lines).length,
      (n) => n === 2,
    );
    feeder.feed('rev', 'c', null);
    await eventually(
      async () => get.messages,
      (messages) => messages.some((m) => m.method === 'notifications/tasks/status' && m.params.status === 'completed'),
    );
    get.stop();
    const relevant = get.messages.filter(
      (m) =>
        m.method === LOGS_NOTIFICATION ||
        (m.method === 'notifications/tasks/status' && m.params.status === 'completed'),
    );
    const pushed = relevant.filter((m) => m.method === LOGS_NOTIFICATION);
    expect(pushed.every((m) => m.params.taskId === taskId)).toBe(true);
    expect(pushed.flatMap((m) => m.params.lines).map((l: Json) => [l.seq, l.text])).toEqual([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]);
    expect(relevant.at(-1).method).toBe('notifications/tasks/status');
    await session.close();
  });
});
