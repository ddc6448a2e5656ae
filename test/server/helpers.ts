import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import type { TaskToolDefinition } from '../../src/runner/tool.js';
import type { Preflight } from '../../src/server/preflight.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { conformancePreflights, conformanceTools } from '../../src/tools/conformance/index.js';

export const EXT = 'io.modelcontextprotocol/tasks';
export const PROTOCOL = '2026-07-28';

export interface TestServer {
  readonly url: string;
  readonly engine: TaskEngine;
  readonly store: TaskStore;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1, port 0, over a real engine (memory store unless given one). */
export async function startServer(
  options: {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tools keep their own Args types
    tools?: readonly TaskToolDefinition<any>[];
    preflights?: Readonly<Record<string, Preflight>>;
    store?: TaskStore;
    authenticate?: (req: IncomingMessage) => Promise<AuthInfo | undefined>;
  } = {},
): Promise<TestServer> {
  const store = options.store ?? createMemoryTaskStore();
  const engine = createEngine({
    store,
    tools: options.tools ?? conformanceTools,
    clock: systemClock,
    ids: systemIds,
    claimIntervalMs: 50,
  });
  engine.start();
  const server = createTerminusServer({ engine, preflights: options.preflights ?? conformancePreflights });
  const http = await server.serveHttp({
    port: 0,
    ...(options.authenticate === undefined ? {} : { authenticate: options.authenticate }),
  });
  return {
    url: http.url,
    engine,
    store,
    close: async () => {
      await http.close();
      await engine.stop();
      await store.close();
    },
  };
}

export interface RpcOptions {
  /** Declare the Tasks extension in this request's client capabilities (default true). */
  readonly declare?: boolean;
  /** Extra `params._meta` keys (e.g. the submission key). */
  readonly meta?: Record<string, unknown>;
  /** Header overrides; `null` removes a header. */
  readonly headers?: Record<string, string | null>;
  readonly token?: string;
}

export interface RpcAnswer {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON, asserted by tests
  readonly result?: any;
  readonly error?: { code: number; message: string; data?: unknown };
}

let nextId = 1;

/** One raw 2026-07-28 JSON-RPC request over fetch: envelope `_meta` plus the routing headers (4.2). */
export async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: RpcOptions = {},
): Promise<RpcAnswer> {
  const id = nextId++;
  const capabilities = options.declare === false ? { elicitation: {} } : { elicitation: {}, extensions: { [EXT]: {} } };
  const body = {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': PROTOCOL,
        'io.modelcontextprotocol/clientInfo': { name: 'terminus-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': capabilities,
        ...options.meta,
      },
    },
  };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL,
    'mcp-method': method,
  };
  const name = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  if (typeof name === 'string') headers['mcp-name'] = name;
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  for (const [k, v] of Object.entries(options.headers ?? {})) {
    if (v === null) delete headers[k];
    else headers[k] = v;
  }
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  const message = parseReply(text, response.headers.get('content-type') ?? '', id);
  return { status: response.status, ...(message ?? {}) };
}

/** Picks the answer to request `id` out of a JSON or SSE body. */
export function parseReply(text: string, contentType: string, id: number): Omit<RpcAnswer, 'status'> | undefined {
  if (text === '') return undefined;
  if (!contentType.includes('text/event-stream')) return JSON.parse(text) as Omit<RpcAnswer, 'status'>;
  for (const frame of text.split('\n\n')) {
    const data = frame
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .join('');
    if (data === '') continue;
    const message = JSON.parse(data) as { id?: unknown };
    if (message.id === id) return message as Omit<RpcAnswer, 'status'>;
  }
  return undefined;
}

/** The messages of an SSE body as they arrive: each event's `data:` lines joined, parsed as JSON. */
export async function* sseMessages<T>(body: ReadableStream<Uint8Array>): AsyncGenerator<T> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const data = buffer
          .slice(0, end)
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .join('');
        buffer = buffer.slice(end + 2);
        if (data !== '') yield JSON.parse(data) as T;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

export interface ListenOptions {
  /** The request id, which stamps every message of the stream (default `sub-1`). */
  readonly id?: string;
  readonly token?: string;
  /** Declare the Tasks extension (default true). */
  readonly declare?: boolean;
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** More members of `params.notifications`. */
  readonly extra?: Record<string, unknown>;
  readonly signal?: AbortSignal;
}

/** Opens a `subscriptions/listen` stream of `taskIds` over HTTP (the Tasks extension, X-67). */
export function postListen(url: string, taskIds: unknown, options: ListenOptions = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL,
      'mcp-method': 'subscriptions/listen',
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: options.id ?? 'sub-1',
      method: 'subscriptions/listen',
      params: {
        notifications: { taskIds, ...options.extra },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': PROTOCOL,
          ...(options.clientInfo === undefined ? {} : { 'io.modelcontextprotocol/clientInfo': options.clientInfo }),
          'io.modelcontextprotocol/clientCapabilities': options.declare === false ? {} : { extensions: { [EXT]: {} } },
        },
      },
    }),
  });
}

/** `tools/call` that must create a task; returns its id. */
export async function createTask(url: string, name: string, args: Record<string, unknown>, options: RpcOptions = {}) {
  const answer = await rpc(url, 'tools/call', { name, arguments: args }, options);
  if (answer.result?.resultType !== 'task') throw new Error(`expected a task, got ${JSON.stringify(answer)}`);
  return answer.result.taskId as string;
}

/** Polls `tasks/get` until `done(result)` or the budget runs out; every answer must be a success. */
export async function pollUntil(
  url: string,
  taskId: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
  done: (task: any) => boolean,
  options: RpcOptions & { budgetMs?: number } = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
): Promise<any> {
  const until = Date.now() + (options.budgetMs ?? 15_000);
  for (;;) {
    const answer = await rpc(url, 'tasks/get', { taskId }, options);
    if (answer.error !== undefined) throw new Error(`tasks/get failed: ${JSON.stringify(answer.error)}`);
    if (done(answer.result)) return answer.result;
    if (Date.now() > until) throw new Error(`task ${taskId} still ${JSON.stringify(answer.result)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const isTerminalStatus = (task: { status: string }) =>
  task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled';
