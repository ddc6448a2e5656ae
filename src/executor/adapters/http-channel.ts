/**
 * JSON-RPC over Streamable HTTP, one POST per request. Modern requests carry the `_meta` envelope and
 * the `Mcp-Method` / `Mcp-Name` routing headers (reference 2.8); legacy requests follow `initialize`
 * and echo `Mcp-Session-Id` when the server hands one out.
 *
 * Failure mapping (wire port): HTTP 429/503 -> `throttled` (Retry-After honoured); 401/403 ->
 * `unauthorized` (with the server's own words when its body carries an error message); no answer
 * (connection refused or dropped, timeout, stream ended early, 5xx without a JSON-RPC body) -> `lost`;
 * unparsable, truncated or schema-invalid JSON -> `malformed`; a JSON-RPC error -> `RpcErrorFailure`.
 *
 * An event-stream answer is read frame by frame: a server request on it (the 2025-11-25
 * `elicitation/create` of an input round, sent on the `tasks/result` stream that waits for the task)
 * goes to the `onRequest` handlers and its answer is POSTed back on the session, while the stream
 * keeps waiting for the request's own answer; nobody taking it answers `-32601`.
 */
import type { Clock } from '../../core/ports.js';
import { WireFailure } from '../wire-port.js';
import {
  headerSafe,
  mcpNameOf,
  parseRetryAfter,
  type Era,
  dispatchServerRequest,
  registerRequestHook,
  type NotificationListener,
  type RpcConnection,
  type ServerRequestHandler,
  type ServerRequestReply,
} from './connection.js';
import {
  DEFAULT_CLIENT_INFO,
  LEGACY_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSION,
  withEnvelope,
  type ClientInfo,
} from './envelope.js';
import type { SessionBinding } from '../operation.js';
import { traceMeta } from './trace-context.js';
import { openPushStream } from './push-stream.js';
import { isRecord, malformed, RpcErrorFailure, unauthorized } from './rpc-error.js';

export interface HttpConnectionOptions {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  readonly url: string;
  readonly clock: Clock;
  readonly era?: Era;
  /** Per-request timeout; reaching it is `lost` (the request may have had its effect). Default 30 000. */
  readonly timeoutMs?: number;
  /** Extra headers on every request (authorization). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly clientInfo?: ClientInfo;
  /** Injected for tests; default the global `fetch`. */
  readonly fetch?: typeof fetch;
  /**
   * A legacy-era session to continue (a resumed operation's, from the ledger): requests carry its
   * `Mcp-Session-Id` and version from the start, with no `initialize`.
   */
  readonly session?: SessionBinding;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** @example const connection = createHttpConnection({ url, clock: systemClock }); */
export function createHttpConnection(options: HttpConnectionOptions): RpcConnection {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const clientInfo = options.clientInfo ?? DEFAULT_CLIENT_INFO;
  const listeners = new Set<NotificationListener>();
  const handlers = new Set<ServerRequestHandler>();
  let nextId = 1;
  let sessionId: string | undefined = options.session?.id;

  const onRequest = (handler: ServerRequestHandler): (() => void) => {
    handlers.add(handler);
    return () => handlers.delete(handler);
  };

  const connection: RpcConnection = {
    era: options.era ?? 'modern',
    legacyVersion: options.session?.protocolVersion,

    request: async (method, params, requestOptions = {}) => {
      const id = nextId++;
      const modern = connection.era === 'modern';
      const body = { jsonrpc: '2.0', id, method, params: modern ? withEnvelope(params, clientInfo) : params };
      const headers = baseHeaders(modern);
      if (modern) {
        headers['mcp-method'] = headerSafe(method);
        const name = mcpNameOf(method, params);
        if (name !== undefined) headers['mcp-name'] = headerSafe(name);
      }
      Object.assign(headers, requestOptions.headers ?? {});
      // `initialize` opens a new session: it never carries one (a kept session the server lost).
      if (method === 'initialize') {
        sessionId = undefined;
        delete headers['mcp-session-id'];
      }
      const response = await post(body, headers, requestOptions.signal, id);
      return readAnswer(response, id);
    },

    notify: async (method, params) => {
      const modern = connection.era === 'modern';
      const body = { jsonrpc: '2.0', method, params: modern ? withEnvelope(params, clientInfo) : params };
      const response = await post(body, baseHeaders(modern), undefined);
      await response.body?.cancel();
    },

    onNotification: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    onRequest,

    session: () =>
      connection.era === 'legacy' && sessionId !== undefined
        ? { id: sessionId, protocolVersion: connection.legacyVersion ?? LEGACY_PROTOCOL_VERSION }
        : undefined,

    openStream: (request, signal) => {
      const modern = connection.era === 'modern';
      const headers = baseHeaders(modern);
      headers.accept = 'text/event-stream';
      const common = { url: options.url, fetch: doFetch, clock: options.clock, onFrame: (f: string) => onFrame(f, 0) };
      if (request.kind === 'session') return openPushStream({ ...common, headers }, signal);
      const id = nextId++;
      const method = 'subscriptions/listen';
      const params = modern ? withEnvelope(request.params, clientInfo) : request.params;
      if (modern) headers['mcp-method'] = method;
      headers.accept = 'application/json, text/event-stream';
      return openPushStream({ ...common, headers, body: { jsonrpc: '2.0', id, method, params }, answerId: id }, signal);
    },

    close: async () => {
      listeners.clear();
      handlers.clear();
    },
  };
  registerRequestHook(connection.request, onRequest);

  function baseHeaders(modern: boolean): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      // W3C trace context as HTTP headers too: the 2025-11-25 leg carries no `_meta` envelope.
      ...traceMeta(),
      ...options.headers,
    };
    if (modern) headers['mcp-protocol-version'] = MODERN_PROTOCOL_VERSION;
    else if (connection.legacyVersion !== undefined) headers['mcp-protocol-version'] = connection.legacyVersion;
    if (!modern && sessionId !== undefined) headers['mcp-session-id'] = sessionId;
    return headers;
  }

  /** `answerId`: read an event-stream answer frame by frame until the answer with this id. */
  async function post(
    body: unknown,
    headers: Record<string, string>,
    signal?: AbortSignal,
    answerId?: number,
  ): Promise<Response> {
    const abort = new AbortController();
    const onAbort = (): void => abort.abort(signal?.reason);
    if (signal?.aborted === true) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = new AbortController();
    let timedOut = false;
    options.clock.sleep(timeoutMs, timer.signal).then(
      () => {
        timedOut = true;
        abort.abort();
      },
      () => undefined,
    );
    try {
      const response = await doFetch(options.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: abort.signal,
      });
      const session = response.headers.get('mcp-session-id');
      if (session !== null && session !== '') sessionId = session;
      // Read the body inside the timeout: a stream cut half-way is `lost` or `malformed`, never a hang.
      const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
      if (eventStream && answerId !== undefined && response.body !== null && response.status < 300) {
        const answer = await readEventStream(response.body, answerId);
        const json = { 'content-type': 'application/json' };
        // No answer: an empty event stream, which `readAnswer` reports as `lost`.
        if (answer === undefined) return new Response('', { status: response.status, headers: response.headers });
        return new Response(JSON.stringify(answer), { status: response.status, headers: json });
      }
      const text = await response.text();
      return new Response(text, { status: response.status, headers: response.headers });
    } catch (error) {
      if (error instanceof WireFailure) throw error;
      const why = timedOut ? 'timed out' : signal?.aborted === true ? 'aborted locally' : 'connection failed';
      throw new WireFailure('lost', `${why}: ${errorText(error)}`, { cause: error });
    } finally {
      timer.abort();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async function readAnswer(response: Response, id: number): Promise<Record<string, unknown>> {
    const status = response.status;
    if (status === 429 || status === 503) {
      await response.body?.cancel();
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), options.clock.now());
      throw new WireFailure('throttled', `HTTP ${status}`, {
        httpStatus: status,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      });
    }
    const text = await response.text();
    if (status === 401 || status === 403) throw unauthorized(status, text);
    const contentType = response.headers.get('content-type') ?? '';
    let message: unknown;
    if (contentType.includes('text/event-stream')) {
      message = fromEventStream(text, id);
      if (message === undefined)
        throw new WireFailure('lost', 'event stream ended before the answer', { httpStatus: status });
    } else {
      if (text === '') throw noBody(status);
      try {
        message = JSON.parse(text);
      } catch (error) {
        if (status >= 500)
          throw new WireFailure('lost', `HTTP ${status} without a JSON-RPC answer`, { httpStatus: status });
        throw malformed(`unparsable JSON (HTTP ${status})`, error);
      }
    }
    return toResult(message, id, status);
  }

  function fromEventStream(text: string, id: number): unknown {
    for (const frame of text.split(/\r?\n\r?\n/)) {
      const message = onFrame(frame, id);
      if (message !== undefined) return message;
    }
    return undefined;
  }

  /** Reads frames as they arrive; resolves with the answer to `id` (then stops reading), or undefined at the end. */
  async function readEventStream(body: ReadableStream<Uint8Array>, id: number): Promise<unknown> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
        const frames = buffer.split(/\r?\n\r?\n/);
        // The last piece is incomplete until the stream ends (then it is read as it is: a cut frame is malformed).
        buffer = done ? '' : (frames.pop() ?? '');
        for (const frame of frames) {
          const message = onFrame(frame, id);
          if (message !== undefined) return message;
        }
        if (done) return undefined;
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
  }

  /** One event-stream frame: the answer to `id` is returned; notifications and server requests are handed on. */
  function onFrame(frame: string, id: number): unknown {
    const data = frame
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (data === '') return undefined;
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch (error) {
      throw malformed('unparsable event-stream frame', error);
    }
    if (!isRecord(message)) return undefined;
    if (message.id === id && ('result' in message || 'error' in message)) return message;
    if (typeof message.method !== 'string') return undefined;
    const params = isRecord(message.params) ? message.params : {};
    if (message.id === undefined) {
      for (const listener of listeners) listener(message.method, params);
    } else if (typeof message.id === 'string' || typeof message.id === 'number') {
      serverRequest(message.id, message.method, params);
    }
    return undefined;
  }

  /** A request the server sent on a stream: offered to the handlers, answered by a POST on the session. */
  function serverRequest(requestId: string | number, method: string, params: Record<string, unknown>): void {
    const answer = async (message: Record<string, unknown>): Promise<void> => {
      const modern = connection.era === 'modern';
      const response = await post({ jsonrpc: '2.0', id: requestId, ...message }, baseHeaders(modern), undefined);
      await response.body?.cancel();
      if (response.status >= 300) {
        throw new WireFailure(
          response.status === 404 ? 'not_found' : 'rejected',
          `HTTP ${response.status} to an answer`,
          {
            httpStatus: response.status,
          },
        );
      }
    };
    const reply: ServerRequestReply = {
      result: (value) => answer({ result: value }),
      error: (code, text, data) => answer({ error: { code, message: text, ...(data === undefined ? {} : { data }) } }),
    };
    const taken = method !== 'ping' && dispatchServerRequest(handlers, { id: requestId, method, params }, reply);
    if (taken) return;
    (method === 'ping' ? reply.result({}) : reply.error(-32601, `Method not found: ${method}`)).catch(() => undefined);
  }

  return connection;
}

function noBody(status: number): WireFailure {
  if (status >= 500) return new WireFailure('lost', `HTTP ${status} without a body`, { httpStatus: status });
  return new WireFailure('rejected', `HTTP ${status} without a JSON-RPC answer`, { httpStatus: status });
}

/**
 * Whether a JSON-RPC error's `data` says "try again later", and the delay it names (`retryAfterMs`;
 * absent with only `retryable: true`, so the executor's own back-off applies); undefined otherwise.
 */
function retryHint(data: unknown): { retryAfterMs?: number } | undefined {
  if (!isRecord(data)) return undefined;
  const after = data.retryAfterMs;
  if (typeof after === 'number' && Number.isFinite(after) && after >= 0) return { retryAfterMs: after };
  return data.retryable === true ? {} : undefined;
}

/** Validates one JSON-RPC response and returns its result, or throws the typed failure. */
export function toResult(message: unknown, id: number | string, httpStatus: number): Record<string, unknown> {
  if (!isRecord(message)) throw malformed('answer is not a JSON object');
  // A 4xx whose body is not JSON-RPC at all (`{"error":"not_found"}` from a router) is the HTTP
  // layer refusing, like a 4xx without a body: no MCP endpoint there, not a garbled answer.
  if (message.jsonrpc !== '2.0' && httpStatus >= 400 && httpStatus < 500) {
    throw new WireFailure('rejected', `HTTP ${httpStatus} without a JSON-RPC answer`, { httpStatus });
  }
  if (message.error !== undefined) {
    const error = message.error;
    if (!isRecord(error) || typeof error.code !== 'number' || typeof error.message !== 'string') {
      throw malformed('error answer without a numeric code and a message');
    }
    const hint = retryHint(error.data);
    if (hint !== undefined) {
      // A JSON-RPC answer that says "later" (our -32029 limit and -32050 unavailable carry
      // `data.retryAfterMs` / `data.retryable`): over stdio, and over HTTP when the status is 200,
      // it is the same throttle a 429 is (C6), never a refusal of the call.
      throw new WireFailure('throttled', error.message, { ...hint, rpcCode: error.code, httpStatus });
    }
    throw new RpcErrorFailure(error.code, error.message, error.data, { httpStatus });
  }
  if (message.jsonrpc !== '2.0' || message.id !== id) {
    if (httpStatus >= 400 && httpStatus < 500) {
      throw new WireFailure('rejected', `HTTP ${httpStatus} without a JSON-RPC answer`, { httpStatus });
    }
    throw malformed('not the JSON-RPC answer to this request');
  }
  if (!isRecord(message.result)) throw malformed('result is not an object');
  return message.result;
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}
