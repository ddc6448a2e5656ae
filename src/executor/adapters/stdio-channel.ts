/**
 * JSON-RPC over the stdio of a spawned server (`stdio-process.ts`: the process, its group and the
 * newline framing; ids, timeouts and the envelope are here). One connection is one
 * era: the opening message pins it on the server (SDK `serveStdio`), so negotiation probes with
 * `server/discover` and falls back to `initialize`.
 *
 * Server-to-client requests: `ping` is answered `{}`; others go to the `onRequest` handlers (the
 * 2025-11-25 adapter takes the task-tagged `elicitation/create` of an input round) and whatever no
 * handler takes is answered `-32601`. A process that exits fails every pending request as `lost` at
 * once and tells `onClose` listeners (the executor reconnects: issue 11, defect 5); `close()` ends
 * the process and its group (stdin, SIGTERM, SIGKILL).
 */
import { WireFailure } from '../wire-port.js';
import {
  dispatchServerRequest,
  registerRequestHook,
  type Era,
  type NotificationListener,
  type RpcConnection,
  type ServerRequestHandler,
  type ServerRequestReply,
} from './connection.js';
import { DEFAULT_CLIENT_INFO, withEnvelope, type ClientInfo } from './envelope.js';
import { toResult } from './http-channel.js';
import { isRecord } from './rpc-error.js';
import { startStdioProcess, type StdioProcessOptions } from './stdio-process.js';

/** The child to spawn (as `startStdioProcess` takes it; stderr defaults to `inherit`), and the framing. */
export interface StdioConnectionOptions extends StdioProcessOptions {
  readonly era?: Era;
  /** Per-request timeout (ms); default 30 000. */
  readonly timeoutMs?: number;
  readonly clientInfo?: ClientInfo;
}

interface Pending {
  resolve(message: unknown): void;
  reject(error: unknown): void;
}

/**
 * Spawns the server and resolves once its process is running.
 *
 * @example
 * ```ts
 * const connection = await createStdioConnection({
 *   command: 'npx',
 *   args: ['terminus', 'serve', '--stdio'],
 *   clock: systemClock,
 * });
 * const wire = await negotiate(connection, { clock: systemClock });
 * ```
 */
export async function createStdioConnection(options: StdioConnectionOptions): Promise<RpcConnection> {
  const transport = await startStdioProcess({ ...options, stderr: options.stderr ?? 'inherit' });
  const closeListeners = new Set<(reason: string) => void>();
  let closing = false;
  const clientInfo = options.clientInfo ?? DEFAULT_CLIENT_INFO;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pending = new Map<number, Pending>();
  const listeners = new Set<NotificationListener>();
  const handlers = new Set<ServerRequestHandler>();
  let nextId = 1;
  let closed = false;

  const failAll = (why: string): void => {
    for (const entry of pending.values()) entry.reject(new WireFailure('lost', why));
    pending.clear();
  };

  const send = async (message: Record<string, unknown>): Promise<void> => {
    if (closed) throw new WireFailure('lost', 'server process closed');
    try {
      await transport.send(message);
    } catch (error) {
      throw new WireFailure('lost', 'could not write to the server process', { cause: error });
    }
  };

  const onRequest = (handler: ServerRequestHandler): (() => void) => {
    handlers.add(handler);
    return () => handlers.delete(handler);
  };

  transport.onmessage = (message) => {
    const m = message as Record<string, unknown>;
    if (typeof m.method === 'string' && (typeof m.id === 'number' || typeof m.id === 'string')) {
      const id = m.id;
      const reply: ServerRequestReply = {
        result: (value) => send({ jsonrpc: '2.0', id, result: value }),
        error: (code, text, data) =>
          send({ jsonrpc: '2.0', id, error: { code, message: text, ...(data === undefined ? {} : { data }) } }),
      };
      const params = isRecord(m.params) ? m.params : {};
      const taken = m.method !== 'ping' && dispatchServerRequest(handlers, { id, method: m.method, params }, reply);
      if (taken) return;
      const answer = m.method === 'ping' ? reply.result({}) : reply.error(-32601, `Method not found: ${m.method}`);
      answer.catch(() => undefined);
      return;
    }
    if (typeof m.method === 'string') {
      const params = isRecord(m.params) ? m.params : {};
      for (const listener of listeners) listener(m.method, params);
      return;
    }
    if (typeof m.id === 'number') {
      const entry = pending.get(m.id);
      pending.delete(m.id);
      entry?.resolve(message);
    }
  };
  transport.onclose = (reason) => {
    closed = true;
    failAll(reason);
    if (closing) return;
    for (const listener of [...closeListeners]) listener(reason);
  };

  const connection: RpcConnection = {
    ...(transport.pid === undefined ? {} : { pid: transport.pid }),
    era: options.era ?? 'modern',
    legacyVersion: undefined,
    request: async (method, params, requestOptions = {}) => {
      const id = nextId++;
      const framed = connection.era === 'modern' ? withEnvelope(params, clientInfo) : params;
      const answer = new Promise<unknown>((resolve, reject) => pending.set(id, { resolve, reject }));
      // Handled below; this only keeps an early rejection (timeout during the write) from being reported.
      answer.catch(() => undefined);
      const timer = new AbortController();
      const stop = (why: string): void => {
        const entry = pending.get(id);
        pending.delete(id);
        entry?.reject(new WireFailure('lost', why));
      };
      options.clock.sleep(timeoutMs, timer.signal).then(
        () => stop('timed out'),
        () => undefined,
      );
      const onAbort = (): void => stop('aborted locally');
      requestOptions.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        await send({ jsonrpc: '2.0', id, method, params: framed });
        return toResult(await answer, id, 200);
      } finally {
        timer.abort();
        requestOptions.signal?.removeEventListener('abort', onAbort);
        pending.delete(id);
      }
    },
    notify: async (method, params) => {
      const framed = connection.era === 'modern' ? withEnvelope(params, clientInfo) : params;
      await send({ jsonrpc: '2.0', method, params: framed });
    },
    onNotification: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onRequest,
    onClose: (listener) => {
      closeListeners.add(listener);
      return () => closeListeners.delete(listener);
    },
    close: async () => {
      closing = true;
      closeListeners.clear();
      listeners.clear();
      handlers.clear();
      failAll('connection closed');
      await transport.close();
    },
  };
  registerRequestHook(connection.request, onRequest);
  return connection;
}
