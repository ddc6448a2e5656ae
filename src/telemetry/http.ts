import type { IncomingHttpHeaders } from 'node:http';
import {
  context,
  createTraceState,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  TraceFlags,
  type Context,
  type Tracer,
} from '@opentelemetry/api';
import type { TerminusMetrics } from './metrics.js';
import { TRACER_NAME } from './trace.js';

/** What the HTTP server (`serveHttp`'s `instrument` option) tells its instrument about a request. */
export interface RequestFacts {
  readonly httpMethod: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer | undefined;
  /** The body as the bridge parsed it once (JSON), or undefined: never parsed again here. */
  readonly parsedBody: unknown;
}

/** Wraps the handling of one request; `run` answers it and resolves with the HTTP status sent. */
export type RequestInstrument = (facts: RequestFacts, run: () => Promise<number>) => Promise<number>;

/**
 * Metrics and a `terminus.request` server span per HTTP request. The span's parent is the W3C trace
 * context the client sent in the JSON-RPC request's `params._meta` (`traceparent`, `tracestate`),
 * else in the HTTP `traceparent` header; handlers run inside the span's context, so the task a
 * request creates links back to it.
 * @example
 * const metrics = createMetrics();
 * await server.serveHttp({ port: 3000, instrument: requestInstrument({ metrics }) });
 */
export function requestInstrument(
  options: { readonly metrics?: TerminusMetrics; readonly tracer?: Tracer; readonly now?: () => number } = {},
): RequestInstrument {
  const tracer = options.tracer ?? trace.getTracer(TRACER_NAME);
  const now = options.now ?? (() => performance.now());
  return async (facts, run) => {
    const message = parseMessage(facts.parsedBody);
    const method = message === undefined ? `${facts.httpMethod} ${routeOf(facts.path)}` : methodLabel(message.method);
    const wire = wireOf(facts, message?.method);
    const parent = parentContext(message?.meta, facts.headers);
    const span = tracer.startSpan(
      'terminus.request',
      {
        kind: SpanKind.SERVER,
        attributes: { 'rpc.method': method, 'terminus.wire': wire, 'http.request.method': facts.httpMethod },
      },
      parent,
    );
    const leave = options.metrics?.inFlight({ method, wire });
    const started = now();
    let code = '500';
    try {
      const status = await context.with(trace.setSpan(parent, span), run);
      code = String(status);
      span.setAttribute('http.response.status_code', status);
      return status;
    } finally {
      leave?.();
      options.metrics?.request({ method, wire, code }, (now() - started) / 1000);
      span.end();
    }
  };
}

/**
 * JSON-RPC methods the wires serve (and MCP's lifecycle ones). Any other name a client sends is
 * `other`: a label per arbitrary string would let one client grow the metrics without bound.
 */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'tasks/get',
  'tasks/result',
  'tasks/cancel',
  'tasks/list',
  'tasks/update',
  'subscriptions/listen',
  'tools/async/status',
  'tools/async/result',
  'tools/async/cancel',
  'tools/async/events',
  'terminus/tasks/lookup',
  'terminus/tasks/events',
  'notifications/initialized',
  'notifications/cancelled',
]);

function methodLabel(method: string | undefined): string {
  if (method === undefined) return 'response';
  return KNOWN_METHODS.has(method) ? method : 'other';
}

interface Message {
  readonly method: string | undefined;
  readonly meta: Record<string, unknown> | undefined;
}

/** The JSON-RPC message of a body the bridge parsed (AIP-151 bodies and others are not one). */
function parseMessage(value: unknown): Message | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { jsonrpc, method, params } = value as { jsonrpc?: unknown; method?: unknown; params?: unknown };
  if (jsonrpc !== '2.0') return undefined;
  const meta = typeof params === 'object' && params !== null ? (params as { _meta?: unknown })._meta : undefined;
  return {
    method: typeof method === 'string' ? method : undefined,
    meta: typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : undefined,
  };
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** W3C trace context from `_meta`, else from the HTTP headers; the root context if neither is valid. */
function parentContext(meta: Record<string, unknown> | undefined, headers: IncomingHttpHeaders): Context {
  const fromMeta = typeof meta?.['traceparent'] === 'string' ? meta['traceparent'] : undefined;
  const header = headers['traceparent'];
  const traceparent = fromMeta ?? (typeof header === 'string' ? header : undefined);
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent.trim());
  if (match === null) return ROOT_CONTEXT;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return ROOT_CONTEXT;
  const state = fromMeta === undefined ? headers['tracestate'] : meta?.['tracestate'];
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId,
    traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
    ...(typeof state === 'string' && state !== '' ? { traceState: createTraceState(state) } : {}),
  });
}

/** Which wire a request is on, from its path, JSON-RPC method and protocol version header. */
function wireOf(facts: RequestFacts, method: string | undefined): string {
  if (facts.path.startsWith('/v1/')) return 'aip-151';
  if (facts.path !== '/mcp') return 'http';
  if (method?.startsWith('tools/async/') === true) return 'sep-1391';
  const version = facts.headers['mcp-protocol-version'];
  // 2025-era clients send their dated version; the 2026-07-28 stateless wire carries the extension.
  if (typeof version === 'string' && version < '2026') return 'mcp-2025-11-25';
  return 'mcp-tasks-ext';
}

/** A bounded route label: the path is client-chosen, so only known prefixes keep their name. */
function routeOf(path: string): string {
  if (path.startsWith('/v1/operations')) return '/v1/operations';
  if (path.startsWith('/v1/tools')) return '/v1/tools';
  if (path.startsWith('/v1/')) return '/v1/*';
  if (path === '/console' || path.startsWith('/console/')) return '/console';
  if (['/mcp', '/healthz', '/readyz', '/metrics'].includes(path)) return path;
  return 'other';
}
