/**
 * A JSON-RPC connection under a client wire adapter: `request` is the `RpcChannel` of the wire port
 * (what the simulation replaces with a faulty in-process channel), plus what a handshake and status
 * hints need. HTTP (`http-channel.ts`) and stdio (`stdio-channel.ts`) implement it.
 */
import type { SessionBinding } from '../operation.js';
import type { RpcChannel } from '../wire-port.js';

/** `modern`: 2026-07-28, every request carries the `_meta` envelope. `legacy`: 2025-11-25 after `initialize`. */
export type Era = 'modern' | 'legacy';

export type NotificationListener = (method: string, params: Record<string, unknown>) => void;

export interface RpcConnection {
  readonly request: RpcChannel;
  /** Which era requests are framed for; negotiation sets it before an adapter uses the connection. */
  era: Era;
  /** The protocol version agreed by a legacy `initialize` (sent as `MCP-Protocol-Version` afterwards). */
  legacyVersion: string | undefined;
  notify(method: string, params: Record<string, unknown>): Promise<void>;
  /** Notifications the server pushes (where the transport can carry them); returns an unsubscribe. */
  onNotification(listener: NotificationListener): () => void;
  /** The server's process id, for a connection that spawned it (stdio). */
  readonly pid?: number;
  /** The transport ended by itself (a stdio child exited), not through `close()`; returns an unsubscribe. */
  onClose?(listener: (reason: string) => void): () => void;
  /**
   * Opens a long-lived push stream (HTTP only): its notifications go to `onNotification` listeners
   * until it ends or `signal` aborts. Rejects with a `WireFailure` when the server refuses it.
   */
  openStream?(request: StreamRequest, signal: AbortSignal): Promise<OpenedStream>;
  /** Requests the server sends to the client (stdio, the SSE stream of a POST); returns an unsubscribe. */
  onRequest?(handler: ServerRequestHandler): () => void;
  /**
   * The legacy-era HTTP session the connection is in (`Mcp-Session-Id` and the negotiated version),
   * once the server handed one out; absent on stdio and on the stateless 2026-07-28 wire.
   */
  session?(): SessionBinding | undefined;
  close(): Promise<void>;
}

/** A push stream the server accepted. */
export interface OpenedStream {
  /** Resolves (never rejects) with why the stream ended. */
  readonly ended: Promise<string>;
}

/** What to open: a `subscriptions/listen` request (modern era) or the session's GET stream (legacy). */
export type StreamRequest =
  { readonly kind: 'listen'; readonly params: Record<string, unknown> } | { readonly kind: 'session' };

/** A request the server sent to the client (`elicitation/create`, `sampling/createMessage`). */
export interface ServerRequest {
  readonly id: string | number;
  readonly method: string;
  readonly params: Record<string, unknown>;
}

/** How the owner of a server request answers it; each resolves once the answer was written. */
export interface ServerRequestReply {
  result(value: Record<string, unknown>): Promise<void>;
  error(code: number, message: string, data?: unknown): Promise<void>;
}

/**
 * Returns true when it takes the request (it MUST then answer it through `reply`, now or later),
 * false to leave it to the next handler; a request nobody takes is answered `-32601`.
 */
export type ServerRequestHandler = (request: ServerRequest, reply: ServerRequestReply) => boolean;

export type ServerRequestHook = (handler: ServerRequestHandler) => () => void;

/**
 * The request hook of the connection a channel belongs to. A wire adapter is handed only the
 * channel function (`RpcChannel`); this lets it reach the hook without widening what every caller
 * passes (channels without one, the simulation's, say, have none).
 */
const requestHooks = new WeakMap<RpcChannel, ServerRequestHook>();

export function registerRequestHook(channel: RpcChannel, hook: ServerRequestHook): void {
  requestHooks.set(channel, hook);
}

export function requestHookOf(channel: RpcChannel): ServerRequestHook | undefined {
  return requestHooks.get(channel);
}

/** Offers a server request to each handler in turn; false when none took it. */
export function dispatchServerRequest(
  handlers: Iterable<ServerRequestHandler>,
  request: ServerRequest,
  reply: ServerRequestReply,
): boolean {
  for (const handler of handlers) if (handler(request, reply)) return true;
  return false;
}

/** Parses `Retry-After` (delta seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Header values must be visible ASCII; others are sent base64-encoded as the 2026 transport says (2.8). */
export function headerSafe(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) && value.trim() === value
    ? value
    : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** `Mcp-Name` for the methods that carry one: the tool name or the task id. */
export function mcpNameOf(method: string, params: Record<string, unknown>): string | undefined {
  const value = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  return typeof value === 'string' ? value : undefined;
}
