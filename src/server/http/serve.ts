import { createServer, type IncomingMessage, type Server as NodeServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isLegacyRequest,
  localhostAllowedHostnames,
  type AuthInfo,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import type { Logger } from '../../core/ports.js';
import type { LegacyHttpLeg, RawRpcMessage } from '../wire/adapter.js';
import { BodyTooLargeError, sendJson, toWebRequest, writeWebResponse } from './node-bridge.js';
import { matchRoute, route, type HttpRoute } from './routes.js';

export interface ServeHttpOptions {
  /** Interface to bind; default `127.0.0.1`. */
  readonly host?: string;
  /** Port; default 3000; 0 picks a free one (read it from the handle). */
  readonly port?: number;
  /** Path of the MCP endpoint; default `/mcp`. */
  readonly path?: string;
  /**
   * Binds a principal to each request (S8, X-56): resolve `AuthInfo` (its `clientId` becomes the
   * owner `auth:<clientId>`), `undefined` for an anonymous caller, or reject: the request is answered
   * 401 and never reaches a handler.
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
  /** Upper bound on a request body; default 4 MiB (the SDK's own). */
  readonly maxBodyBytes?: number;
  /**
   * Wraps the answer to every routed request (metrics, a server span: `requestInstrument` of
   * telemetry): `run` writes the response and resolves with its HTTP status.
   */
  readonly instrument?: (facts: RequestFacts, run: () => Promise<number>) => Promise<number>;
}

/** What `instrument` learns of a request: its method, path, headers and body bytes. */
export interface RequestFacts {
  readonly httpMethod: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer | undefined;
}

export interface HttpServerHandle {
  /** The MCP endpoint, with the real port (e.g. `http://127.0.0.1:41234/mcp`). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops accepting, ends open exchanges and streams, resolves when the socket is closed. */
  close(): Promise<void>;
}

/** What the HTTP layer needs from a Terminus server; supplied by `createTerminusServer`. */
export interface McpEndpoint {
  readonly factory: McpServerFactory;
  readonly prechecks: readonly Precheck[];
  readonly logger: Logger;
  /** Serves 2025-era traffic instead of the SDK's stateless leg (see `WireAdapter.legacyHttp`). */
  readonly legacy?: LegacyHttpLeg;
}

/** A raw JSON-RPC check before the SDK (bound to its wire's deps by the server). */
export type Precheck = (
  message: RawRpcMessage,
  context: { readonly authInfo: AuthInfo | undefined; readonly signal: AbortSignal },
) => Response | undefined | Promise<Response | undefined>;

const DEFAULT_MAX_BODY = 4 * 1024 * 1024;
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export async function serveHttp(endpoint: McpEndpoint, options: ServeHttpOptions = {}): Promise<HttpServerHandle> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const allowedHosts = options.allowedHosts ?? (LOOPBACK.has(host) ? localhostAllowedHostnames() : undefined);
  const legacy = endpoint.legacy;
  const mcp = createMcpHandler(endpoint.factory, {
    legacy: legacy === undefined ? 'stateless' : 'reject',
    maxRequestBodySize: maxBody,
    onerror: (error) => endpoint.logger.debug('mcp request rejected', { error: error.message }),
  });

  const mcpRoute = route('*', path, async (request, info) => {
    const early = await precheck(endpoint.prechecks, request, info);
    if (early !== undefined) return early;
    if (legacy !== undefined) {
      const parsedBody = parseJson(info.body);
      if (await isLegacyRequest(request, parsedBody, { maxRequestBodySize: maxBody })) {
        return legacy.handle(request, {
          parsedBody,
          ...(info.authInfo === undefined ? {} : { authInfo: info.authInfo }),
        });
      }
    }
    return mcp.fetch(request, info.authInfo === undefined ? {} : { authInfo: info.authInfo });
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
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const match = matchRoute(routes, req.method ?? 'GET', pathname);
    if (match === undefined) {
      sendJson(res, 404, { error: 'not_found', path: pathname });
      return;
    }
    let authInfo: AuthInfo | undefined;
    try {
      authInfo = options.authenticate === undefined ? undefined : await options.authenticate(req);
    } catch (error) {
      endpoint.logger.debug('authentication rejected', { error: String(error) });
      req.resume();
      sendJson(res, 401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer' });
      return;
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    let request: Request;
    let body: Buffer | undefined;
    try {
      ({ request, body } = await toWebRequest(req, abort.signal, maxBody));
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        sendJson(res, 413, { error: 'payload_too_large' });
        return;
      }
      throw error;
    }
    if (allowedHosts !== undefined) {
      const rejected = hostHeaderValidationResponse(request, [...allowedHosts]);
      if (rejected !== undefined) return writeWebResponse(res, rejected);
    }
    const answer = async (): Promise<number> => {
      const response = await match.route.handle(request, { authInfo, params: match.params, body });
      await writeWebResponse(res, response);
      return response.status;
    };
    if (options.instrument === undefined) await answer();
    else
      await options.instrument({ httpMethod: req.method ?? 'GET', path: pathname, headers: req.headers, body }, answer);
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
  };
}

/** Raw JSON-RPC checks the SDK entry cannot express; a body that is not JSON is left to the SDK. */
async function precheck(
  checks: readonly Precheck[],
  request: Request,
  info: { readonly body: Buffer | undefined; readonly authInfo: AuthInfo | undefined },
): Promise<Response | undefined> {
  if (checks.length === 0 || request.method !== 'POST' || info.body === undefined) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(info.body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  for (const check of checks) {
    const answer = await check(message, { authInfo: info.authInfo, signal: request.signal });
    if (answer !== undefined) return answer;
  }
  return undefined;
}

function parseJson(body: Buffer | undefined): unknown {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
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
