import type { AuthInfo } from '@modelcontextprotocol/server';

/**
 * A tiny route table for the HTTP server, so other wires can serve plain HTTP beside `/mcp`
 * (AIP-151 `/v1/operations` is the next one). Handlers are web-standard: `Request` in, `Response`
 * out; the node bridge and the `authenticate` hook run before them.
 */
export interface HttpRequestInfo {
  /** The principal bound by the server's `authenticate` hook, if any. */
  readonly authInfo: AuthInfo | undefined;
  /** `:name` segments, and `*` for the rest of a trailing-wildcard path. */
  readonly params: Readonly<Record<string, string>>;
  /** The body bytes as read; the `Request`'s own body is still unread. */
  readonly body: Buffer | undefined;
  /** A POST body parsed as JSON once by the bridge; undefined when absent or not JSON. */
  readonly parsedBody?: unknown;
}

export type HttpHandler = (request: Request, info: HttpRequestInfo) => Promise<Response>;

export interface HttpRoute {
  /** An HTTP method, or `*` for any. */
  readonly method: string;
  /** `/v1/operations/:name`, `/v1/operations/*` or an exact path. */
  readonly path: string;
  readonly handle: HttpHandler;
  /**
   * Answered without the `authenticate` hook (liveness and readiness probes, which carry no
   * credentials). Such a route MUST reveal nothing a caller could own.
   */
  readonly unauthenticated?: boolean;
  /**
   * The body the route takes: JSON (the default, every API route) or `form`, an HTML form post
   * (`application/x-www-form-urlencoded`: the console's actions, which must work without script).
   * The Origin check guards both alike.
   */
  readonly body?: 'json' | 'form';
  /**
   * A browser session of the route's own (the console's sign-in cookie), for a request without an
   * `Authorization` header when the server authenticates: the session's principal, or undefined to
   * leave the request to the `authenticate` hook. A request with the header is the hook's alone.
   */
  readonly session?: (headers: RouteHeaders) => AuthInfo | undefined;
  /**
   * The answer to a request without credentials that the `authenticate` hook refused, instead of
   * the 401 (the console's redirect to its sign-in page). `url` is the request's path and query.
   */
  readonly signIn?: (url: string, headers: RouteHeaders) => Response;
}

/** The request headers a route's `session` and `signIn` read (lower-case names, as Node gives them). */
export type RouteHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Builds a route: adding one to a server is a one-liner.
 * @example
 * await terminus.serveHttp({ routes: [route('GET', '/v1/operations/*', listOrGetOperation)] });
 */
export function route(
  method: string,
  path: string,
  handle: HttpHandler,
  options: Pick<HttpRoute, 'unauthenticated' | 'body' | 'session' | 'signIn'> = {},
): HttpRoute {
  return {
    method: method.toUpperCase(),
    path,
    handle,
    ...(options.unauthenticated === true ? { unauthenticated: true } : {}),
    ...(options.body === undefined ? {} : { body: options.body }),
    ...(options.session === undefined ? {} : { session: options.session }),
    ...(options.signIn === undefined ? {} : { signIn: options.signIn }),
  };
}

export interface RouteMatch {
  readonly route: HttpRoute;
  readonly params: Record<string, string>;
}

/** First route whose method and path match, in table order. */
export function matchRoute(routes: readonly HttpRoute[], method: string, pathname: string): RouteMatch | undefined {
  for (const r of routes) {
    if (r.method !== '*' && r.method !== method.toUpperCase()) continue;
    const params = matchPath(r.path, pathname);
    if (params !== undefined) return { route: r, params };
  }
  return undefined;
}

function matchPath(pattern: string, pathname: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = pathname.split('/');
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    if (w === '*' && i === want.length - 1) {
      params['*'] = got.slice(i).map(decodeURIComponent).join('/');
      return params;
    }
    const g = got[i];
    if (g === undefined) return undefined;
    if (w.startsWith(':') && g !== '') params[w.slice(1)] = decodeURIComponent(g);
    else if (w !== g) return undefined;
  }
  return got.length === want.length ? params : undefined;
}
