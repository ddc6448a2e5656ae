import { createServer, type IncomingMessage, type Server as NodeServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  isLegacyRequest,
  localhostAllowedHostnames,
  type AuthInfo,
  type Implementation,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import { isTerminusError } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';
import type { RequestFacts } from '../../telemetry/http.js';
import { checkBody, checkHead, defaultAllowedOrigins, refusalResponse, type EdgeRefusal } from './edge.js';
import type { LegacyHttpLeg, RawRpcMessage } from '../wire/adapter.js';
import { asRetryableHttp } from '../wire/retryable.js';
import { fastAnswer, fastSessionAnswer, type FastMethod } from './fast-path.js';
import {
  abortWhenUnfinished,
  BodyTooLargeError,
  readBody,
  sendJson,
  webRequestOf,
  writeAnswer,
  writeEventAnswer,
  writeWebResponse,
  type ReadBody,
} from './node-bridge.js';
import { matchRoute, route, type HttpRoute } from './routes.js';

export interface ServeHttpOptions {
  /** Interface to bind; default `127.0.0.1`. */
  readonly host?: string;
  /** Port; default 3000; 0 picks a free one (read it from the handle). */
  readonly port?: number;
  /** Path of the MCP endpoint; default `/mcp`. */
  readonly path?: string;
  /**
   * Binds a principal to each request (S8, X-56): resolve `AuthInfo` (the owner is `principalOf`
   * it: what the hook put under `extra['mcp-terminus/principal']`, else `auth:<clientId>`),
   * `undefined` for an anonymous caller, or reject: the request is answered 401 and never reaches a
   * handler.
   * @example
   * authenticate: async (req) => {
   *   const token = req.headers.authorization?.replace(/^Bearer /, '');
   *   if (token === undefined) return undefined;
   *   const clientId = tokens.get(token);
   *   if (clientId === undefined) throw new Error('unknown token');
   *   return { token, clientId, scopes: [] };
   * }
   */
  readonly authenticate?: (req: IncomingMessage) => Promise<AuthInfo | undefined>;
  /** Extra routes, matched before the MCP endpoint. */
  readonly routes?: readonly HttpRoute[];
  /**
   * Host header allow-list against DNS rebinding. Default: the localhost names when bound to a
   * loopback address, no check otherwise (put a reverse proxy's checks in front then).
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Origin host names a browser page may call from (CSRF, issue 12 item 6), on every route; a
   * request without `Origin` (any non-browser client) and a same-origin page always pass. Default:
   * the localhost names. A foreign `Origin` is answered 403.
   */
  readonly allowedOrigins?: readonly string[];
  /** Upper bound on a request body; default 4 MiB (the SDK's own). */
  readonly maxBodyBytes?: number;
  /**
   * Wraps the answer to every routed request (metrics, a server span: `requestInstrument` of
   * telemetry): `run` writes the response and resolves with its HTTP status.
   */
  readonly instrument?: (facts: RequestFacts, run: () => Promise<number>) => Promise<number>;
  /**
   * Answer the task methods (`tasks/get`, `tasks/update`, `tasks/cancel`, `terminus/tasks/lookup`
   * of the 2026-07-28 Tasks extension) without the SDK when every check the SDK would make is known
   * to pass (see `http/fast-path.ts`), and the 2025-11-25 `tasks/get` and `tasks/cancel` on a
   * session of the sessionful leg; anything else still goes to the SDK. Default true; false
   * sends every request to the SDK (the differential test compares the two).
   */
  readonly fastPath?: boolean;
}

export type { RequestFacts };

export interface HttpServerHandle {
  /** The MCP endpoint, with the real port (e.g. `http://127.0.0.1:41234/mcp`). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops accepting, ends open exchanges and streams, resolves when the socket is closed. */
  close(): Promise<void>;
  /** 2025-era HTTP sessions open now (0 without a sessionful leg), for metrics. */
  openSessions(): number;
}

/** What the HTTP layer needs from a Terminus server; supplied by `createTerminusServer`. */
export interface McpEndpoint {
  readonly factory: McpServerFactory;
  readonly prechecks: readonly Precheck[];
  readonly logger: Logger;
  /** Serves 2025-era traffic instead of the SDK's stateless leg (see `WireAdapter.legacyHttp`). */
  readonly legacy?: LegacyHttpLeg;
  /** The wires' fast-path methods (`WireAdapter.fastMethods`) and the `serverInfo` the SDK stamps. */
  readonly fast?: { readonly methods: ReadonlyMap<string, FastMethod>; readonly serverInfo: Implementation };
}

/** A raw JSON-RPC check before the SDK (bound to its wire's deps by the server). */
export type Precheck = (
  message: RawRpcMessage,
  context: {
    readonly authInfo: AuthInfo | undefined;
    readonly signal: AbortSignal;
    /** A request header by name (any case), comma-joined when repeated. */
    readonly header: (name: string) => string | undefined;
  },
) => Response | undefined | Promise<Response | undefined>;

const DEFAULT_MAX_BODY = 4 * 1024 * 1024;
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export async function serveHttp(endpoint: McpEndpoint, options: ServeHttpOptions = {}): Promise<HttpServerHandle> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const allowedHosts = options.allowedHosts ?? (LOOPBACK.has(host) ? localhostAllowedHostnames() : undefined);
  const allowedOrigins = options.allowedOrigins ?? defaultAllowedOrigins();
  const legacy = endpoint.legacy;
  const mcp = createMcpHandler(endpoint.factory, {
    legacy: legacy === undefined ? 'stateless' : 'reject',
    maxRequestBodySize: maxBody,
    onerror: (error) => endpoint.logger.debug('mcp request rejected', { error: error.message }),
  });

  const fast = options.fastPath === false || endpoint.fast === undefined ? undefined : endpoint.fast;
  // The prechecks run in handle(), before the fast path and the SDK alike.
  const mcpRoute = route('*', path, async (request, info) => {
    // The body parsed once by the bridge, handed on: the SDK then neither clones nor re-reads it.
    const parsedBody = info.parsedBody;
    // JSON-RPC batches left MCP in 2025-06-18; no leg we serve accepts one.
    if (Array.isArray(parsedBody)) {
      return refusalResponse(
        {
          status: 400,
          reason: 'batch_not_supported',
          message: 'JSON-RPC batches are not supported: send one request per POST',
        },
        'jsonrpc',
      );
    }
    if (legacy !== undefined) {
      if (await isLegacyRequest(request, parsedBody, { maxRequestBodySize: maxBody })) {
        return asRetryableHttp(
          request,
          await legacy.handle(request, {
            parsedBody,
            ...(info.authInfo === undefined ? {} : { authInfo: info.authInfo }),
          }),
        );
      }
    }
    return asRetryableHttp(
      request,
      await mcp.fetch(request, {
        ...(info.authInfo === undefined ? {} : { authInfo: info.authInfo }),
        ...(parsedBody === undefined ? {} : { parsedBody }),
      }),
    );
  });
  const routes = [...(options.routes ?? []), mcpRoute];

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      endpoint.logger.error('http handler failed', { error: String(error) });
      if (!res.headersSent) sendJson(res, 500, { error: 'internal' });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawPath = (req.url ?? '/').split('?')[0] as string;
    // Refusals speak the route's dialect: JSON-RPC on the MCP endpoint, google.rpc.Status elsewhere.
    const refuse = (refusal: EdgeRefusal): Promise<void> => {
      req.resume();
      return writeWebResponse(res, refusalResponse(refusal, rawPath === path ? 'jsonrpc' : 'google'));
    };
    const head = checkHead(req, { allowedHosts, allowedOrigins });
    if (head !== undefined) return refuse(head);
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const match = matchRoute(routes, req.method ?? 'GET', pathname);
    if (match === undefined) {
      sendJson(res, 404, { error: 'not_found', path: pathname });
      return;
    }
    let authInfo: AuthInfo | undefined;
    const { session, signIn } = match.route;
    const bare = req.headers.authorization === undefined;
    try {
      authInfo =
        options.authenticate === undefined || match.route.unauthenticated === true
          ? undefined
          : ((bare ? session?.(req.headers) : undefined) ?? (await options.authenticate(req)));
    } catch (error) {
      endpoint.logger.debug('authentication rejected', { error: String(error) });
      // A browser without credentials is sent to the route's sign-in; a refused header stays a 401.
      if (bare && signIn !== undefined) {
        req.resume();
        return writeWebResponse(res, signIn(req.url ?? '/', req.headers));
      }
      const challenge = isTerminusError(error) ? error.details?.challenge : undefined;
      return refuse({
        status: 401,
        reason: 'unauthenticated',
        message: isTerminusError(error, 'unauthenticated') ? error.message : 'Authentication failed',
        headers: { 'www-authenticate': typeof challenge === 'string' ? challenge : 'Bearer' },
      });
    }
    let read: ReadBody;
    try {
      read = await readBody(req, maxBody);
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        // The rest of the body is never read: close the connection so it is not reused mid-upload.
        return refuse({
          status: 413,
          reason: 'payload_too_large',
          message: `Request body over ${maxBody} bytes`,
          headers: { connection: 'close' },
        });
      }
      throw error;
    }
    const { body, parsedBody } = read;
    const refused = checkBody(req, body, { streams: match.route === mcpRoute, form: match.route.body === 'form' });
    if (refused !== undefined) return refuse(refused);
    const signal = abortWhenUnfinished(res);
    const answer = async (): Promise<number> => {
      if (match.route === mcpRoute) {
        const early = await precheck(endpoint.prechecks, req, parsedBody, authInfo, signal);
        if (early !== undefined) {
          await writeWebResponse(res, early);
          return early.status;
        }
        const quick =
          fast === undefined ? undefined : await fastAnswer(req, parsedBody, fast.methods, fast.serverInfo, authInfo);
        if (quick !== undefined) {
          writeAnswer(res, quick.status, quick.headers, quick.body);
          return quick.status;
        }
        const session =
          fast === undefined || legacy?.fast === undefined
            ? undefined
            : await fastSessionAnswer(req, parsedBody, legacy.fast, authInfo);
        if (session !== undefined) {
          writeEventAnswer(res, session.status, session.headers, session.body);
          return session.status;
        }
      }
      const request = webRequestOf(req, body, signal);
      const response = await match.route.handle(request, { authInfo, params: match.params, body, parsedBody });
      await writeWebResponse(res, response);
      return response.status;
    };
    if (options.instrument === undefined) await answer();
    else
      await options.instrument(
        { httpMethod: req.method ?? 'GET', path: pathname, headers: req.headers, body, parsedBody },
        answer,
      );
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Node's default accept backlog (511) overflowed at 1,000 simultaneous connects in our test
    // (ECONNRESET); 4096 is the usual kernel cap (net.core.somaxconn), which clamps it anyway.
    server.listen({ port: options.port ?? 3000, host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost}:${address.port}${path}`,
    host: address.address,
    port: address.port,
    close: () => closeServer(server, () => Promise.all([mcp.close(), legacy?.close()]).then(() => undefined)),
    openSessions: () => legacy?.size ?? 0,
  };
}

/** Raw JSON-RPC checks the SDK entry cannot express; a body that is not JSON is left to the SDK. */
async function precheck(
  checks: readonly Precheck[],
  req: IncomingMessage,
  message: unknown,
  authInfo: AuthInfo | undefined,
  signal: AbortSignal,
): Promise<Response | undefined> {
  if (checks.length === 0 || req.method !== 'POST') return undefined;
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const header = (name: string): string | undefined => {
    const value = req.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  for (const check of checks) {
    const answer = await check(message, { authInfo, signal, header });
    if (answer !== undefined) return answer;
  }
  return undefined;
}

async function closeServer(server: NodeServer, closeMcp: () => Promise<void>): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Aborts in-flight modern exchanges first, so their responses end before the sockets go.
  await closeMcp();
  server.closeIdleConnections();
  // Long-lived SSE listen streams never go idle; cut them.
  server.closeAllConnections();
  await closed;
}
