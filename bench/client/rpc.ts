/**
 * The thinnest 2025-11-25 JSON-RPC client that can drive every variant the same way, so the server
 * figures measure servers, not a client library: newline-framed stdio on a spawned child, and
 * Streamable HTTP with one POST per request (JSON or SSE answers, `Mcp-Session-Id` echoed) plus an
 * optional GET stream for server-initiated notifications.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

export type NotificationListener = (method: string, params: Record<string, unknown>) => void;

export interface RpcClient {
  request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  onNotification(listener: NotificationListener): void;
  close(): Promise<void>;
}

export class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
  }
}

const PROTOCOL_VERSION = '2025-11-25';

/** `initialize` + `notifications/initialized`, 2025-11-25. */
export async function initialize(client: RpcClient & { notify(method: string): Promise<void> }): Promise<void> {
  await client.request('initialize', {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: 'terminus-bench', version: '0.1.0' },
  });
  await client.notify('notifications/initialized');
}

type Pending = { resolve(result: Record<string, unknown>): void; reject(error: unknown): void };

function settle(pending: Map<number, Pending>, message: Record<string, unknown>): boolean {
  if (typeof message.id !== 'number' || typeof message.method === 'string') return false;
  const entry = pending.get(message.id);
  if (entry === undefined) return true;
  pending.delete(message.id);
  const error = message.error as { code?: number; message?: string } | undefined;
  if (error !== undefined) entry.reject(new RpcError(error.code ?? 0, error.message ?? 'error'));
  else entry.resolve((message.result ?? {}) as Record<string, unknown>);
  return true;
}

/** A client on a spawned server's stdin/stdout. Many requests may be in flight at once. */
export function stdioClient(
  child: ChildProcessWithoutNullStreams,
): RpcClient & { notify(method: string): Promise<void> } {
  const pending = new Map<number, Pending>();
  const listeners: NotificationListener[] = [];
  let nextId = 1;
  const write = (message: Record<string, unknown>): void => {
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  };
  createInterface({ input: child.stdout }).on('line', (line) => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    if (settle(pending, message)) return;
    if (typeof message.method !== 'string') return;
    if (message.id !== undefined) {
      // Server-to-client requests: answer pings, refuse the rest (the bench tools ask nothing).
      write(
        message.method === 'ping'
          ? { id: message.id, result: {} }
          : { id: message.id, error: { code: -32601, message: 'not supported by the bench client' } },
      );
      return;
    }
    for (const listener of listeners) listener(message.method, (message.params ?? {}) as Record<string, unknown>);
  });
  child.on('exit', () => {
    for (const entry of pending.values()) entry.reject(new Error('server process exited'));
    pending.clear();
  });
  return {
    request: (method, params) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        write({ id, method, params });
      }),
    notify: async (method) => write({ method, params: {} }),
    onNotification: (listener) => listeners.push(listener),
    close: async () => {
      child.stdin.end();
    },
  };
}

export interface HttpClientOptions {
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A client of one Streamable HTTP session. */
export function httpClient(options: HttpClientOptions): RpcClient & {
  notify(method: string): Promise<void>;
  /** Opens the GET stream for server-initiated notifications (after `initialize`). */
  listen(): Promise<void>;
} {
  const listeners: NotificationListener[] = [];
  const pending = new Map<number, Pending>();
  const streams: AbortController[] = [];
  let nextId = 1;
  let sessionId: string | undefined;
  let initialized = false;

  const headers = (): Record<string, string> => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(initialized ? { 'mcp-protocol-version': PROTOCOL_VERSION } : {}),
    ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
    ...options.headers,
  });

  const dispatch = (message: Record<string, unknown>): void => {
    if (settle(pending, message)) return;
    if (typeof message.method === 'string' && message.id === undefined) {
      for (const listener of listeners) listener(message.method, (message.params ?? {}) as Record<string, unknown>);
    }
  };

  /** Reads an SSE body frame by frame, dispatching every JSON-RPC message as it arrives. */
  const readEvents = async (body: ReadableStream<Uint8Array>): Promise<void> => {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        const data = frame
          .split(/\r?\n/)
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n');
        if (data !== '') dispatch(JSON.parse(data) as Record<string, unknown>);
      }
    }
  };

  const post = async (message: Record<string, unknown>): Promise<void> => {
    const response = await fetch(options.url, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ jsonrpc: '2.0', ...message }),
    });
    const session = response.headers.get('mcp-session-id');
    if (session !== null) sessionId = session;
    const type = response.headers.get('content-type') ?? '';
    if (type.includes('text/event-stream') && response.body !== null) {
      await readEvents(response.body);
    } else if (type.includes('application/json')) {
      const parsed = (await response.json()) as Record<string, unknown> | Record<string, unknown>[];
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) dispatch(m);
    } else {
      await response.body?.cancel();
      if (response.status >= 400 && typeof message.id === 'number') {
        settle(pending, { id: message.id, error: { code: -response.status, message: `HTTP ${response.status}` } });
      }
    }
  };

  return {
    request: (method, params) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        post({ id, method, params }).then(
          () => settle(pending, { id, error: { code: -1, message: 'no answer on the stream' } }),
          (error: unknown) => {
            pending.delete(id);
            reject(error instanceof Error ? error : new Error(String(error)));
          },
        );
      }).then((result) => {
        if (method === 'initialize') initialized = true;
        return result as Record<string, unknown>;
      }),
    notify: async (method) => post({ method, params: {} }),
    onNotification: (listener) => listeners.push(listener),
    listen: async () => {
      const abort = new AbortController();
      streams.push(abort);
      const response = await fetch(options.url, {
        method: 'GET',
        headers: { ...headers(), accept: 'text/event-stream' },
        signal: abort.signal,
      });
      if (!response.ok || response.body === null) throw new Error(`GET stream refused: HTTP ${response.status}`);
      readEvents(response.body).catch(() => undefined);
    },
    close: async () => {
      for (const stream of streams) stream.abort();
    },
  };
}
