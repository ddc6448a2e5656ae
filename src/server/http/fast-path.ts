import type { IncomingMessage } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  classifyInboundRequest,
  CLIENT_INFO_META_KEY,
  isJsonContentType,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  type AuthInfo,
  type Implementation,
  type Server,
} from '@modelcontextprotocol/server';
import { UNAVAILABLE_RETRY_AFTER_MS, UNAVAILABLE_RPC_CODE } from '../wire/retryable.js';
import { modernRequestRevision } from './modern-request.js';

/**
 * The task-method fast path (issue 14 item 1): a 2026-07-28 `tasks/get` and its siblings answered
 * from the engine without building a web `Request`, an SDK `Server`, a per-request transport, an
 * `AbortController` per exchange or a `Response`. It takes a request ONLY when every rung of the
 * SDK's modern ladder (SDK 2.4: `createMcpHandler` -> `serveModern` -> `Protocol._onrequest`) is
 * known to pass, and then answers byte for byte what the SDK would; anything else (a batch, a
 * notification, a 2025-era body, a header the ladder would refuse, a parameter only the SDK
 * decides about) returns `undefined` and goes to the SDK, which answers it as always.
 * test/server/fast-path.test.ts sends the same requests both ways and compares the answers.
 */

/** What a wire's handler sees of the request: the SDK's `ServerContext` fields it reads. */
export interface FastContext {
  readonly mcpReq: {
    /** The reserved envelope keys lifted out of `params._meta` (`ctx.mcpReq.envelope`). */
    readonly envelope?: Readonly<Record<string, unknown>>;
    /** `params.inputResponses` as the SDK partitions it (only bare response objects). */
    readonly inputResponses?: Record<string, unknown>;
  };
  readonly http?: { readonly authInfo?: AuthInfo };
  /** The legacy session's id (2025-11-25 HTTP sessions); never set on the stateless modern wire. */
  readonly sessionId?: string;
  /**
   * The SDK `Server` of a connection that outlives the request (a 2025-11-25 HTTP session, a stdio
   * connection): where a created task is followed for notifications (`sessionOf`).
   */
  readonly server?: Server;
}

/**
 * A wire's handler of one method, the same function the wire registers on the SDK `Server` (or
 * the same body): it resolves with the result or throws the error (a `ProtocolError` with `code`,
 * `message`, `data`). With `takes`, the fast path runs it only for the requests `takes` accepts
 * (synchronously, before anything is written) and hands every other one to the SDK: `tools/call`
 * takes only the calls that create a task, the SDK runs the rest (inline calls, preflights).
 */
export type FastMethod = ((params: Record<string, unknown>, ctx: FastContext) => Promise<Record<string, unknown>>) & {
  readonly takes?: (params: Record<string, unknown>, ctx: FastContext) => boolean;
};

/**
 * The sessionful leg as the HTTP fast path sees it: the handlers its sessions' servers run, and the
 * session state those servers' transports check before they dispatch a request.
 */
export interface LegacyFastLeg {
  /** `tasks/get` and `tasks/cancel`: the very handlers the leg's SDK servers have registered. */
  readonly methods: ReadonlyMap<string, FastMethod>;
  /**
   * The session's SDK `Server` when session `sessionId` would dispatch request `requestId` now:
   * open, opened by the principal of `authInfo` (as `handle` compares), and no request with that id
   * in flight on it (the SDK transport would re-map that id's stream); it is then marked seen, as
   * `handle` does. Undefined otherwise.
   */
  claim(sessionId: string, authInfo: AuthInfo | undefined, requestId: string | number): Server | undefined;
}

/** An answer ready for the socket: the status, the headers and the body of one write. */
export interface FastAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** An SSE answer: written chunked, as the SDK path streams it (no `content-length`). */
  readonly eventStream?: boolean;
}

/** The revisions `createMcpHandler` serves on its modern leg (SDK 2.4: `SUPPORTED_MODERN_PROTOCOL_VERSIONS`). */
const MODERN_REVISIONS: readonly string[] = ['2026-07-28'];

/** SDK 2.4 `ProtocolErrorCode.MissingRequiredClientCapability`: the one in-band error answered 400. */
const MISSING_CAPABILITY = -32021;

/** The reserved envelope keys the SDK lifts out of `params._meta` (`RESERVED_ENVELOPE_META_KEYS`). */
const ENVELOPE_KEYS = [
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
];

/** The `params` member the `Mcp-Name` header must mirror, by method (SDK 2.4 `validateStandardRequestHeaders`). */
const NAMED_BY: Readonly<Record<string, string>> = {
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
  'tools/call': 'name',
};

/**
 * The answer to `message` if the fast path may give it, else `undefined` (send it to the SDK).
 * `message` is the body the bridge parsed once; the edge (`checkHead`, `checkBody`), the
 * `authenticate` hook and the prechecks (rate limits) have already run, as for the SDK path.
 */
export async function fastAnswer(
  req: IncomingMessage,
  message: unknown,
  methods: ReadonlyMap<string, FastMethod>,
  serverInfo: Implementation,
  authInfo: AuthInfo | undefined,
): Promise<FastAnswer | undefined> {
  if (req.method !== 'POST' || !isRecord(message) || typeof message.method !== 'string') return undefined;
  const method = methods.get(message.method);
  if (method === undefined) return undefined;
  // createMcpHandler: 415 for any other media type.
  if (!isJsonContentType(req.headers['content-type'])) return undefined;
  const protocolVersionHeader = header(req, 'mcp-protocol-version');
  const mcpMethodHeader = header(req, 'mcp-method');
  const mcpNameHeader = header(req, 'mcp-name');
  // The SDK classifier's decision (`classifyInboundRequest`: the era, the JSON-RPC shape, the
  // envelope schema, the header/body cross-checks) in plain code, checked against it differentially.
  const revision = modernRequestRevision(message, protocolVersionHeader, mcpMethodHeader);
  if (revision === undefined || !MODERN_REVISIONS.includes(revision)) return undefined;
  // validateStandardRequestHeaders (not exported): both headers present and, for the task methods,
  // Mcp-Name equal to params.taskId as sent. Any other spelling (OWS, a base64 sentinel, a
  // non-string taskId) is left to the SDK, which decides and answers it.
  if (protocolVersionHeader === undefined || mcpMethodHeader === undefined) return undefined;
  const params = message.params as Record<string, unknown>;
  const named = NAMED_BY[message.method];
  if (named !== undefined) {
    if (typeof params[named] !== 'string' || mcpNameHeader !== params[named]) return undefined;
    if (mcpNameHeader.startsWith('=?')) return undefined;
  }
  // No method served here has a static client-capability requirement
  // (REQUIRED_CLIENT_CAPABILITIES_BY_METHOD is empty) or a scope challenge (only McpServer's own
  // tools have one, and a server built with `setup` offers no fast `tools/call`); the envelope the
  // classifier validated is the one checkInboundEnvelope reads again.
  const id = message.id as string | number;
  const { handlerParams, context } = lift(params, authInfo);
  if (method.takes?.(handlerParams, context) === false) return undefined;
  try {
    const result = normalize(message.method, await method(handlerParams, context));
    return json(200, { result: encodeResult(result, serverInfo), jsonrpc: '2.0', id });
  } catch (error) {
    const thrown = error as { code?: unknown; message?: unknown; data?: unknown };
    const raw = typeof thrown.code === 'number' && Number.isSafeInteger(thrown.code) ? thrown.code : -32603;
    // The 2026 codec's encodeErrorCode: the retired -32002 travels as -32602.
    const code = raw === -32002 ? -32602 : raw;
    const body = {
      jsonrpc: '2.0',
      id,
      error: {
        code,
        message: (thrown.message as string | undefined) ?? 'Internal error',
        ...(thrown.data !== undefined ? { data: thrown.data } : {}),
      },
    };
    // PerRequestHTTPServerTransport: a handler's error is in-band (200) except -32021 (400);
    // asRetryableHttp then makes an unavailable store a 503 with Retry-After.
    if (code === UNAVAILABLE_RPC_CODE) {
      return json(503, body, { 'retry-after': String(Math.ceil(UNAVAILABLE_RETRY_AFTER_MS / 1000)) });
    }
    return json(code === MISSING_CAPABILITY ? 400 : 200, body);
  }
}

/** The legacy revision whose session requests the fast path answers (the sessionful leg's transport accepts it). */
const SESSION_REVISIONS: readonly string[] = ['2025-11-25'];

/** The top-level members of a JSON-RPC request; any other is left to the SDK's schema. */
const REQUEST_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The answer to a 2025-11-25 `tasks/get` or `tasks/cancel` on a session of the sessionful leg
 * (`rev2025-11-25/session.ts`), if the fast path may give it, else `undefined` (send it to the
 * SDK). It takes a request ONLY when every rung the SDK path climbs is known to pass: the SDK's
 * classifier routes it to the legacy era as an ordinary request (no `initialize`); the leg knows
 * the `Mcp-Session-Id`, the caller is the session's principal, and no request of the same id is in
 * flight there (`LegacyFastLeg.claim`); and the session transport's `handlePostRequest` would pass
 * it: `Accept` naming both types, a JSON content type, the JSON-RPC schema (only the four members,
 * an integer or string id, object params), and an `MCP-Protocol-Version` it supports (named
 * exactly; a request without one is left to the SDK). The answer is what `Protocol._onrequest`
 * sends through that transport: the 2025 codec leaves the result as the handler made it, the
 * error code through `encodeErrorCode`, one SSE event on a 200 stream with the transport's headers,
 * and `asRetryableHttp`'s 503 with `Retry-After` when that event is the unavailable error.
 */
export async function fastSessionAnswer(
  req: IncomingMessage,
  message: unknown,
  leg: LegacyFastLeg,
  authInfo: AuthInfo | undefined,
): Promise<FastAnswer | undefined> {
  if (req.method !== 'POST' || !isRecord(message) || typeof message.method !== 'string') return undefined;
  const method = leg.methods.get(message.method);
  if (method === undefined) return undefined;
  const sessionId = header(req, 'mcp-session-id');
  if (sessionId === undefined || sessionId.length === 0) return undefined;
  const { id, params } = message;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  if (params !== undefined && !isRecord(params)) return undefined;
  if (message.jsonrpc !== '2.0' || Object.keys(message).some((key) => !REQUEST_MEMBERS.has(key))) return undefined;
  const accept = header(req, 'accept');
  if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return undefined;
  }
  if (!isJsonContentType(req.headers['content-type'])) return undefined;
  const protocolVersionHeader = header(req, 'mcp-protocol-version');
  if (protocolVersionHeader === undefined || !SESSION_REVISIONS.includes(protocolVersionHeader)) return undefined;
  const mcpMethodHeader = header(req, 'mcp-method');
  const mcpNameHeader = header(req, 'mcp-name');
  // isLegacyRequest, which routes the request to the leg, is this classifier on the same headers.
  const route = classifyInboundRequest({
    httpMethod: 'POST',
    body: message,
    protocolVersionHeader,
    ...(mcpMethodHeader === undefined ? {} : { mcpMethodHeader }),
    ...(mcpNameHeader === undefined ? {} : { mcpNameHeader }),
  });
  if (route.kind !== 'legacy' || route.reason !== 'no-claim') return undefined;
  const server = leg.claim(sessionId, authInfo, id as string | number);
  if (server === undefined) return undefined;
  const context: FastContext = {
    mcpReq: {},
    sessionId,
    server,
    ...(authInfo === undefined ? {} : { http: { authInfo } }),
  };
  if (method.takes?.(params ?? {}, context) === false) return undefined;
  let event: Record<string, unknown>;
  try {
    const result = await method(params ?? {}, context);
    event = { result, jsonrpc: '2.0', id };
  } catch (error) {
    event = errorAnswer(id as string | number, error);
  }
  const unavailable = (event.error as { code?: unknown } | undefined)?.code === UNAVAILABLE_RPC_CODE;
  // The transport's SSE headers, in the order a web `Headers` writes them (sorted by name).
  const headers: Record<string, string> = {
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'content-type': 'text/event-stream',
    'mcp-session-id': sessionId,
    ...(unavailable ? { 'retry-after': String(Math.ceil(UNAVAILABLE_RETRY_AFTER_MS / 1000)) } : {}),
    'x-accel-buffering': 'no',
  };
  return {
    status: unavailable ? 503 : 200,
    headers,
    body: `event: message\ndata: ${JSON.stringify(event)}\n\n`,
    eventStream: true,
  };
}

/**
 * The JSON-RPC answer to `message` on a connection pinned to `era` (stdio: `stdio-fast.ts`), if
 * the fast path may give it, else `undefined` (deliver it to the SDK). The same rungs as over
 * HTTP without the headers: one ordinary request (the four members, an integer or string id) of a
 * fast method; on the modern era the SDK classifier's decision (`modernRequestRevision`) must be revision 2026-07-28
 * (the JSON-RPC shape and the envelope `checkInboundEnvelope` reads again), and the result is
 * encoded as the 2026 codec does; on the legacy era params must be absent or an object, and the
 * result goes out as the handler made it. Errors as `Protocol._onrequest` sends them.
 */
export function fastRpcAnswer(
  message: unknown,
  methods: ReadonlyMap<string, FastMethod>,
  era: 'modern' | 'legacy',
  serverInfo: Implementation,
  server?: Server,
): Promise<Record<string, unknown>> | undefined {
  if (!isRecord(message) || typeof message.method !== 'string') return undefined;
  const method = methods.get(message.method);
  if (method === undefined) return undefined;
  const { id, params } = message;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  if (message.jsonrpc !== '2.0' || Object.keys(message).some((key) => !REQUEST_MEMBERS.has(key))) return undefined;
  const rpcId = id as string | number;
  const withServer = server === undefined ? {} : { server };
  if (era === 'legacy') {
    if (params !== undefined && !isRecord(params)) return undefined;
    const context: FastContext = { mcpReq: {}, ...withServer };
    if (method.takes?.(params ?? {}, context) === false) return undefined;
    return rpcCall(method, params ?? {}, context, rpcId, (result) => result);
  }
  if (!isRecord(params)) return undefined;
  // No headers on stdio: the SDK classifier's decision without them (modern-request.ts).
  const revision = modernRequestRevision(message, undefined, undefined);
  if (revision === undefined || !MODERN_REVISIONS.includes(revision)) return undefined;
  const lifted = lift(params, undefined);
  const context: FastContext = { ...lifted.context, ...withServer };
  if (method.takes?.(lifted.handlerParams, context) === false) return undefined;
  const name = message.method;
  return rpcCall(method, lifted.handlerParams, context, rpcId, (result) =>
    encodeResult(normalize(name, result), serverInfo),
  );
}

/** Runs one handler; its result or error as the JSON-RPC response `Protocol._onrequest` sends. */
async function rpcCall(
  method: FastMethod,
  params: Record<string, unknown>,
  context: FastContext,
  id: string | number,
  encode: (result: Record<string, unknown>) => Record<string, unknown>,
): Promise<Record<string, unknown>> {
  try {
    return { result: encode(await method(params, context)), jsonrpc: '2.0', id };
  } catch (error) {
    return errorAnswer(id, error);
  }
}

/** A handler's throw as the JSON-RPC error response `Protocol._onrequest` sends (both eras). */
function errorAnswer(id: string | number, error: unknown): Record<string, unknown> {
  const thrown = error as { code?: unknown; message?: unknown; data?: unknown };
  const raw = Number.isSafeInteger(thrown.code) ? (thrown.code as number) : -32603;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      // Both codecs' encodeErrorCode: the retired -32002 travels as -32602.
      code: raw === -32002 ? -32602 : raw,
      message: (thrown.message as string | undefined) ?? 'Internal error',
      ...(thrown.data !== undefined ? { data: thrown.data } : {}),
    },
  };
}

/**
 * `liftWireOnlyMaterial` + the context `Protocol._onrequest` builds: the envelope keys leave
 * `_meta` (which goes when empty), `inputResponses` and `requestState` leave `params`.
 */
function lift(
  params: Record<string, unknown>,
  authInfo: AuthInfo | undefined,
): { handlerParams: Record<string, unknown>; context: FastContext } {
  const handlerParams = { ...params };
  const meta = params._meta as Record<string, unknown>;
  const envelope: Record<string, unknown> = {};
  const rest = { ...meta };
  for (const key of ENVELOPE_KEYS) {
    if (!(key in meta)) continue;
    envelope[key] = meta[key];
    delete rest[key];
  }
  if (Object.keys(rest).length > 0) handlerParams._meta = rest;
  else delete handlerParams._meta;
  const hasResponses = 'inputResponses' in params;
  delete handlerParams.inputResponses;
  delete handlerParams.requestState;
  return {
    handlerParams,
    context: {
      mcpReq: {
        envelope,
        ...(hasResponses ? { inputResponses: acceptedResponses(params.inputResponses) } : {}),
      },
      ...(authInfo === undefined ? {} : { http: { authInfo } }),
    },
  };
}

/** `partitionInputResponses(...).accepted`: bare response objects only, never `{ method, result }`. */
function acceptedResponses(value: unknown): Record<string, unknown> {
  const accepted: Record<string, unknown> = {};
  if (!isRecord(value)) return accepted;
  for (const [key, entry] of Object.entries(value)) {
    if (!isRecord(entry) || 'method' in entry || 'result' in entry) continue;
    accepted[key] = entry;
  }
  return accepted;
}

/** The members of the 2026 `tools/call` result schema, in its order (SDK 2.4 `dispatchResultSchemas`). */
const TOOL_RESULT_SHAPE = ['_meta', 'content', 'structuredContent', 'isError'];

/**
 * What the SDK does to a registered `tools/call` handler's result on the modern era before
 * encoding it (SDK 2.4 `McpServer._wrapHandler`): `normalizeContentlessToolResult` gives a result
 * without `content` and without the keys of another result family (`task`, `inputRequests`,
 * `requestState`) a `content: []` (so the flat 2026 `CreateTaskResult` carries one, as
 * docs/known-gaps.md says), and the result schema's parse puts its own members first, in the
 * schema's order, the others after them as they came.
 */
function normalize(method: string, result: Record<string, unknown>): Record<string, unknown> {
  if (method !== 'tools/call') return result;
  const foreign = 'task' in result || 'inputRequests' in result || 'requestState' in result;
  const filled = result.content !== undefined || foreign ? result : { ...result, content: [] };
  const ordered: Record<string, unknown> = {};
  for (const key of TOOL_RESULT_SHAPE) if (filled[key] !== undefined) ordered[key] = filled[key];
  for (const [key, value] of Object.entries(filled)) if (!(key in ordered)) ordered[key] = value;
  return ordered;
}

/**
 * The 2026 codec's `encodeResult` for a task method: `resultType` stamped when absent, no cache
 * fields (not a cacheable method), the server's identity added to `_meta` unless already there.
 */
function encodeResult(result: Record<string, unknown>, serverInfo: Implementation): Record<string, unknown> {
  const typed = result.resultType === undefined ? { ...result, resultType: 'complete' } : result;
  const meta = typed._meta;
  if (meta === undefined) return { ...typed, _meta: { [SERVER_INFO_META_KEY]: serverInfo } };
  if (!isRecord(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return typed;
  return { ...typed, _meta: { ...meta, [SERVER_INFO_META_KEY]: serverInfo } };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): FastAnswer {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** A request header as the web `Headers.get` reads it (node joins repeated ones with ", " too). */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
