import { afterEach, describe, expect, test } from 'vitest';
import { requestDigest } from '../../src/core/digest.js';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import { LIMIT_EXCEEDED_CODE, type ServerLimits } from '../../src/server/limits.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { conformanceTools } from '../../src/tools/conformance/index.js';
import { ALICE, authenticate, BOB } from '../wires/helpers.js';
import { postListen, rpc, sseMessages } from './helpers.js';

/**
 * Issue 12 items 8 and 9: one caller's listen streams cannot starve the others (a per-caller and a
 * server-wide bound), stream upkeep reads each watched task once per change however many streams
 * watch it, and 2025 sessions are capped.
 */
let close: (() => Promise<void>) | undefined;
const streams: AbortController[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.abort();
  await close?.();
  close = undefined;
});

/** A memory store that counts `get` calls per task id. */
function countingStore(): TaskStore & { readonly reads: Map<string, number> } {
  const inner = createMemoryTaskStore();
  const reads = new Map<string, number>();
  return Object.assign(Object.create(inner) as TaskStore, {
    reads,
    get: (owner: string, id: string, now: number) => {
      reads.set(id, (reads.get(id) ?? 0) + 1);
      return inner.get(owner, id, now);
    },
  });
}

async function start(limits: Partial<ServerLimits>) {
  const store = countingStore();
  const engine = createEngine({ store, tools: conformanceTools, clock: systemClock, ids: systemIds });
  engine.start();
  const registry = createWireRegistry({ disabled: [], limits });
  const server = createTerminusServer({ engine: registry.guard(engine), wires: registry.adapters });
  const http = await server.serveHttp({ port: 0, authenticate });
  close = async () => {
    await http.close();
    await engine.stop();
    await store.close();
  };
  return { url: http.url, store, engine };
}

/** A task no runner serves (tool `idle`): it stays `working` until cancelled. */
async function idleTask(store: TaskStore, owner: string, id: string): Promise<string> {
  await store.create({
    id,
    owner,
    tool: 'idle',
    args: {},
    requestDigest: requestDigest('idle', {}),
    submissionKey: null,
    wire: 'mcp-tasks-ext',
    ttlMs: null,
    keepAliveMs: null,
    pollIntervalMs: 1000,
    now: systemClock.now(),
  });
  return id;
}

interface Stream {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
  readonly error?: any;
  readonly retryAfter: string | null;
  /** Resolves with the frames once `enough` says so. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
  until(enough: (frames: any[]) => boolean): Promise<any[]>;
}

async function listen(url: string, token: string, taskIds: string[]): Promise<Stream> {
  const controller = new AbortController();
  streams.push(controller);
  const response = await postListen(url, taskIds, { id: 'sub', token, signal: controller.signal });
  const retryAfter = response.headers.get('retry-after');
  if (response.status !== 200) {
    const body = (await response.json()) as { error?: unknown };
    return {
      status: response.status,
      error: body.error,
      retryAfter,
      until: () => Promise.reject(new Error('refused')),
    };
  }
  const messages = sseMessages<unknown>(response.body!);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
  const frames: any[] = [];
  return {
    status: 200,
    retryAfter,
    async until(enough) {
      while (!enough(frames)) {
        const next = await messages.next();
        if (next.done === true) break;
        frames.push(next.value);
      }
      return frames;
    },
  };
}

const statusIs = (status: string) => (frames: { method?: string; params?: { status?: string } }[]) =>
  frames.some((f) => f.method === 'notifications/tasks' && f.params?.status === status);

/** A 2025-11-25 `initialize` without a session: opens one. */
function initialize(url: string, token: string | undefined): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cap', version: '1' } },
    }),
  });
}

/** Ends a session with DELETE, as the transport rules say. */
async function endSession(url: string, sessionId: string, token: string): Promise<Response> {
  const answer = await fetch(url, {
    method: 'DELETE',
    headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${token}` },
  });
  await answer.arrayBuffer();
  return answer;
}

describe('listen streams (issue 12 item 8) and sessions (item 9) are bounded', () => {
  test('100 streams of one caller: the per-caller bound refuses the rest with 429, another caller is served', async () => {
    const { url, store } = await start({ maxListenStreamsPerCaller: 8, maxListenStreams: 64 });
    const taskId = await idleTask(store, 'auth:alice', 'alice-task');
    const opened = await Promise.all(Array.from({ length: 100 }, () => listen(url, ALICE, [taskId])));
    const accepted = opened.filter((s) => s.status === 200);
    const refused = opened.filter((s) => s.status !== 200);
    expect(accepted).toHaveLength(8);
    expect(refused).toHaveLength(92);
    for (const s of refused) {
      expect(s.status).toBe(429);
      expect(Number(s.retryAfter)).toBeGreaterThan(0);
      expect(s.error).toMatchObject({
        code: LIMIT_EXCEEDED_CODE,
        data: { reason: 'too_many_streams', limit: 8 },
      });
    }
    // Bob is not starved: his stream and his reads are served.
    const bobTask = await idleTask(store, 'auth:bob', 'bob-task');
    const bob = await listen(url, BOB, [bobTask]);
    expect(bob.status).toBe(200);
    await bob.until(statusIs('working'));
    const read = await rpc(url, 'tasks/get', { taskId: bobTask }, { token: BOB });
    expect(read.result?.status).toBe('working');
  });

  test('a closed stream gives its slot back; the server-wide bound holds across callers', async () => {
    const { url, store } = await start({ maxListenStreamsPerCaller: 2, maxListenStreams: 3 });
    const a = await idleTask(store, 'auth:alice', 'a');
    const b = await idleTask(store, 'auth:bob', 'b');
    const first = await listen(url, ALICE, [a]);
    await first.until(statusIs('working'));
    expect((await listen(url, ALICE, [a])).status).toBe(200);
    expect((await listen(url, BOB, [b])).status).toBe(200);
    const full = await listen(url, BOB, [b]);
    expect(full.status).toBe(429);
    expect(full.error?.data).toMatchObject({ reason: 'too_many_streams', limit: 3 });
    streams[0]!.abort();
    let again: Stream | undefined;
    for (let i = 0; i < 50 && again?.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await listen(url, BOB, [b]);
    }
    expect(again?.status).toBe(200);
  });

  test('upkeep is event-driven and shared: one change of a task watched by 8 streams is one store read, not 8', async () => {
    const { url, store, engine } = await start({ maxListenStreamsPerCaller: 8 });
    const taskId = await idleTask(store, 'auth:alice', 'watched');
    const opened = await Promise.all(Array.from({ length: 8 }, () => listen(url, ALICE, [taskId])));
    await Promise.all(opened.map((s) => s.until(statusIs('working'))));
    const before = store.reads.get(taskId) ?? 0;
    await engine.cancel('auth:alice', taskId);
    await Promise.all(opened.map((s) => s.until(statusIs('cancelled'))));
    const reads = (store.reads.get(taskId) ?? 0) - before;
    // One read for the event; at most one more if the shared 2 s poll fired meanwhile.
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(2);
  });

  test('2025 sessions: one initialize over maxSessions is 503 with Retry-After and the limit code', async () => {
    // Two callers, one session each (the per-caller bound defaults to a tenth, at least 1): the server is full.
    const { url } = await start({ maxSessions: 2 });
    for (const token of [ALICE, BOB]) {
      const ok = await initialize(url, token);
      await ok.arrayBuffer();
      expect(ok.status).toBe(200);
    }
    const refused = await initialize(url, undefined);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const error = ((await refused.json()) as { error: { message: string } }).error;
    expect(error).toMatchObject({ code: LIMIT_EXCEEDED_CODE, data: { reason: 'too_many_sessions', limit: 2 } });
    expect(error.message).toContain('--max-sessions)');
  });

  test('2025 sessions: one caller flooding initialize holds its own share only; other callers still open theirs', async () => {
    // The probe that found it: --max-sessions 50, one token opening 50 sessions locked out everyone.
    const { url } = await start({ maxSessions: 50 });
    const flood = await Promise.all(Array.from({ length: 50 }, () => initialize(url, ALICE)));
    const accepted = flood.filter((r) => r.status === 200);
    const refused = flood.filter((r) => r.status !== 200);
    expect(accepted).toHaveLength(5); // the default: a tenth of maxSessions
    expect(refused).toHaveLength(45);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      const error = ((await r.json()) as { error: { message: string } }).error;
      expect(error).toMatchObject({ code: LIMIT_EXCEEDED_CODE, data: { reason: 'too_many_sessions', limit: 5 } });
      expect(error.message).toContain('for this caller (limit 5, --max-sessions-per-caller)');
    }
    await Promise.all(accepted.map((r) => r.arrayBuffer()));
    // Bob and an anonymous caller (every unauthenticated caller is the one principal `anonymous`) are served.
    for (const token of [BOB, BOB, undefined]) {
      const other = await initialize(url, token);
      await other.arrayBuffer();
      expect(other.status).toBe(200);
    }
  });

  test('2025 sessions: a session ended with DELETE gives its caller’s slot back', async () => {
    const { url } = await start({ maxSessions: 10, maxSessionsPerCaller: 2 });
    const first = await initialize(url, ALICE);
    await first.arrayBuffer();
    const second = await initialize(url, ALICE);
    await second.arrayBuffer();
    expect((await initialize(url, ALICE)).status).toBe(429);
    const sessionId = first.headers.get('mcp-session-id') ?? '';
    // Another principal cannot end alice's session: it is not found for bob, and her slot stays taken.
    expect((await endSession(url, sessionId, BOB)).status).toBe(404);
    expect((await initialize(url, ALICE)).status).toBe(429);
    expect((await endSession(url, sessionId, ALICE)).status).toBe(200);
    const again = await initialize(url, ALICE);
    await again.arrayBuffer();
    expect(again.status).toBe(200);
  });
});
