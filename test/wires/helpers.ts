import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { systemClock, systemIds } from '../../src/core/system.js';
import type { WireName } from '../../src/core/task.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { defineTaskTool, ToolRpcError, type TaskToolDefinition } from '../../src/runner/tool.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { parseReply } from '../server/helpers.js';

/** Bearer tokens of the two principals the tests use. */
export const ALICE = 'token-alice';
export const BOB = 'token-bob';
const PRINCIPALS: Record<string, string> = { [ALICE]: 'alice', [BOB]: 'bob' };

export async function authenticate(req: IncomingMessage): Promise<AuthInfo | undefined> {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const token = header.replace(/^Bearer /, '');
  const clientId = PRINCIPALS[token];
  if (clientId === undefined) throw new Error('unknown token');
  return Promise.resolve({ token, clientId, scopes: [] });
}

/** Handlers that block until a test releases them, by `key`. */
export class Gates {
  readonly #open = new Map<string, () => void>();
  readonly #waiting = new Map<string, Promise<void>>();

  wait(key: string, signal: AbortSignal): Promise<void> {
    let promise = this.#waiting.get(key);
    if (promise === undefined) {
      promise = new Promise<void>((resolve) => this.#open.set(key, resolve));
      this.#waiting.set(key, promise);
    }
    const aborted = new Promise<void>((_, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
    return Promise.race([promise, aborted]);
  }

  release(key: string): void {
    if (!this.#waiting.has(key)) this.#waiting.set(key, Promise.resolve());
    this.#open.get(key)?.();
  }
}

const workArgs = z.object({
  mode: z.enum(['ok', 'tool_error', 'rpc_error', 'block', 'ask']).default('ok'),
  key: z.string().optional(),
  text: z.string().optional(),
});

/** The test tools: `work` (optional), `needs_task` (required), `inline_only` (forbidden). */
export function testTools(gates: Gates): TaskToolDefinition<z.infer<typeof workArgs>>[] {
  const handler: TaskToolDefinition<z.infer<typeof workArgs>>['handler'] = async (args, ctx) => {
    if (args.mode === 'block') {
      await ctx.progress(1, 2, 'halfway');
      await gates.wait(args.key ?? 'default', ctx.signal);
    }
    if (args.mode === 'tool_error') return { content: [{ type: 'text', text: 'tool says no' }], isError: true };
    if (args.mode === 'rpc_error') throw new ToolRpcError(-32010, 'backend refused', { backend: 'x' });
    if (args.mode === 'ask') {
      const reply = await ctx.requestInput(
        { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        'Who are you?',
      );
      const name = reply.action === 'accept' ? String(reply.content?.name) : reply.action;
      return { content: [{ type: 'text', text: `hello ${name}` }] };
    }
    return { content: [{ type: 'text', text: `done ${args.text ?? ''}`.trim() }], structuredContent: { ok: true } };
  };
  return [
    defineTaskTool({ name: 'work', description: 'test work', inputSchema: workArgs, handler, pollIntervalMs: 50 }),
    defineTaskTool({
      name: 'needs_task',
      description: 'runs only as a task',
      inputSchema: workArgs,
      handler,
      taskSupport: 'required',
      pollIntervalMs: 50,
    }),
    defineTaskTool({
      name: 'inline_only',
      description: 'never a task',
      inputSchema: workArgs,
      handler,
      taskSupport: 'forbidden',
    }),
  ];
}

export interface WireServer {
  readonly url: string;
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  readonly engine: TaskEngine;
  readonly gates: Gates;
  close(): Promise<void>;
}

/** `createTerminusServer` with every registered wire, on 127.0.0.1 port 0, with bearer auth. */
export async function startWireServer(
  options: { disabled?: readonly WireName[]; store?: TaskStore; sessionIdleMs?: number } = {},
): Promise<WireServer> {
  const gates = new Gates();
  const store = options.store ?? createMemoryTaskStore();
  const engine = createEngine({
    store,
    tools: testTools(gates),
    clock: systemClock,
    ids: systemIds,
    claimIntervalMs: 20,
    leaseMs: 3000,
  });
  engine.start();
  const registry = createWireRegistry({
    disabled: options.disabled ?? [],
    ...(options.sessionIdleMs === undefined ? {} : { sessionIdleMs: options.sessionIdleMs }),
  });
  const server = createTerminusServer({ engine: registry.guard(engine), wires: registry.adapters });
  const http = await server.serveHttp({ port: 0, authenticate });
  return {
    url: http.url,
    base: http.url.replace(/\/mcp$/, ''),
    engine,
    gates,
    close: async () => {
      await http.close();
      await engine.stop();
      // A store passed in outlives this server (a restart on the same tasks).
      if (options.store === undefined) await store.close();
    },
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON, asserted by tests
export type Json = any;

export interface RpcReply {
  readonly status: number;
  readonly result?: Json;
  readonly error?: { code: number; message: string; data?: Json };
}

/** Every JSON-RPC message of an SSE body. */
export function sseMessages(text: string): Json[] {
  const messages: Json[] = [];
  for (const frame of text.split('\n\n')) {
    const data = frame
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .join('');
    if (data !== '') messages.push(JSON.parse(data));
  }
  return messages;
}

let nextId = 1;

/**
 * A raw 2025-era client over fetch: `initialize` opens a session on the sessionful leg, then each
 * request carries `Mcp-Session-Id`, `MCP-Protocol-Version` and the bearer token.
 */
export class LegacySession {
  readonly #url: string;
  readonly #token: string | undefined;
  #sessionId: string | undefined;
  #version = '2025-11-25';
  initializeResult: Json;

  constructor(url: string, token: string | undefined) {
    this.#url = url;
    this.#token = token;
  }

  static async open(
    url: string,
    token: string | undefined,
    capabilities: Record<string, unknown> = {},
    protocolVersion = '2025-11-25',
  ): Promise<LegacySession> {
    const session = new LegacySession(url, token);
    session.#version = protocolVersion;
    const reply = await session.request('initialize', {
      protocolVersion,
      capabilities,
      clientInfo: { name: 'raw-legacy', version: '1.0.0' },
    });
    if (reply.error !== undefined) throw new Error(`initialize failed: ${JSON.stringify(reply.error)}`);
    session.initializeResult = reply.result;
    await session.notify('notifications/initialized');
    return session;
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  #headers(): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': this.#version,
    };
    if (this.#sessionId !== undefined) headers['mcp-session-id'] = this.#sessionId;
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    return headers;
  }

  /** The JSON-RPC id of the last request sent. */
  lastRequestId = 0;

  async request(method: string, params: Record<string, unknown> = {}): Promise<RpcReply> {
    const id = nextId++;
    this.lastRequestId = id;
    const response = await fetch(this.#url, {
      method: 'POST',
      headers: this.#headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    const sid = response.headers.get('mcp-session-id');
    if (sid !== null) this.#sessionId = sid;
    const text = await response.text();
    return { status: response.status, ...(parseReply(text, response.headers.get('content-type') ?? '', id) ?? {}) };
  }

  /** Like `request`, also returning the server->client requests that came on the same stream. */
  async requestWithServerRequests(
    method: string,
    params: Record<string, unknown> = {},
  ): Promise<{ reply: RpcReply; serverRequests: Json[] }> {
    const id = nextId++;
    const response = await fetch(this.#url, {
      method: 'POST',
      headers: this.#headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    const reply = { status: response.status, ...(parseReply(text, contentType, id) ?? {}) };
    const serverRequests = contentType.includes('text/event-stream')
      ? sseMessages(text).filter((m) => m.method !== undefined && m.id !== undefined)
      : [];
    return { reply, serverRequests };
  }

  /** Answers a server->client request. */
  async respond(id: unknown, result: unknown): Promise<void> {
    const response = await fetch(this.#url, {
      method: 'POST',
      headers: this.#headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id, result }),
    });
    await response.text();
  }

  async notify(method: string, params: Record<string, unknown> = {}): Promise<void> {
    const response = await fetch(this.#url, {
      method: 'POST',
      headers: this.#headers(),
      body: JSON.stringify({ jsonrpc: '2.0', method, params }),
    });
    await response.text();
  }

  /** Opens the session's GET stream; `messages` fills as frames arrive until `stop()`. */
  async openStream(): Promise<{ readonly messages: Json[]; stop(): void }> {
    const abort = new AbortController();
    const response = await fetch(this.#url, {
      method: 'GET',
      headers: { ...this.#headers(), accept: 'text/event-stream' },
      signal: abort.signal,
    });
    if (response.status !== 200 || response.body === null) throw new Error(`GET stream: ${response.status}`);
    const messages: Json[] = [];
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    void (async () => {
      let buffer = '';
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          buffer += value;
          const frames = buffer.split('\n\n');
          buffer = frames.pop() ?? '';
          messages.push(...sseMessages(frames.join('\n\n')));
        }
      } catch {
        // stopped
      }
    })();
    return { messages, stop: () => abort.abort() };
  }

  async close(): Promise<void> {
    if (this.#sessionId === undefined) return;
    const response = await fetch(this.#url, { method: 'DELETE', headers: this.#headers() });
    await response.text();
  }
}

/** AIP-151 over fetch. */
export async function aip(
  base: string,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Polls `read` until `done` holds; fails with the last value after `budgetMs`. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  budgetMs = 10_000,
): Promise<T> {
  const until = Date.now() + budgetMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`condition not met; last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
