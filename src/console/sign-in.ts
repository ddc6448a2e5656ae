/**
 * Signing in to the console when the server authenticates (`--auth-tokens`, `--auth-jwks`): a browser
 * cannot send a bearer header, so `/console/sign-in` takes the token in a form, verifies it with the
 * server's own hook, and answers a session cookie (`sessions.ts`): HttpOnly, SameSite=Strict,
 * Path=/console, Secure over https, with the session's lifetime. The session's principal is the
 * token's (S8: a signed-in person sees only their tasks). Every form of a session carries its CSRF
 * token; `POST /console/sign-out` ends the session. A bearer header keeps working for scripts.
 */
import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Authenticate } from '../server/auth/index.js';
import { route, type HttpRequestInfo, type HttpRoute, type RouteHeaders } from '../server/http/routes.js';
import { checkOrigin, htmlResponse } from './answers.js';
import { html, page, type Html } from './html.js';
import { sameSecret, SessionStore, type ConsoleSession } from './sessions.js';

/** `ConsoleOptions.signIn`: how a token typed on the sign-in page is verified, and the sessions' bounds. */
export interface ConsoleSignIn {
  /** The token's principal, or a rejection (the token is refused). `verifyBearer` makes one from a hook. */
  readonly verify: (token: string) => Promise<AuthInfo>;
  /** Sessions kept at once (default 1000; the oldest goes first). */
  readonly maxSessions?: number;
  /** A session's lifetime in ms (default 8 h; never past a JWT's own expiry). */
  readonly sessionTtlMs?: number;
  /** Milliseconds since the epoch (tests); default `Date.now`. */
  readonly now?: () => number;
}

/**
 * `verify` for `ConsoleSignIn` from the server's `authenticate` hook: the token goes through it as
 * the `Authorization: Bearer` header of a request, exactly as an API call's would.
 */
export function verifyBearer(authenticate: Authenticate): (token: string) => Promise<AuthInfo> {
  return async (token) => {
    const request = { headers: { authorization: `Bearer ${token}` } } as unknown as IncomingMessage;
    const info = await authenticate(request);
    if (info === undefined) throw new Error('no principal for this token');
    return info;
  };
}

const header = (headers: RouteHeaders, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' ? value : value?.[0];
};

const requestHeaders = (request: Request): RouteHeaders => Object.fromEntries(request.headers.entries());

/**
 * The cookie's name: one per port, so two consoles on one host (cookies ignore ports) keep their own
 * sessions instead of overwriting each other's.
 */
function cookieName(headers: RouteHeaders): string {
  const port = /:(\d+)$/.exec(header(headers, 'host') ?? '')?.[1];
  return port === undefined ? 'terminus_console' : `terminus_console_${port}`;
}

function cookieValue(headers: RouteHeaders): string | undefined {
  const name = cookieName(headers);
  for (const part of (header(headers, 'cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Over https (here, or at a proxy in front that says so), the cookie is `Secure`. */
function secure(headers: RouteHeaders, url: string): boolean {
  return url.startsWith('https:') || header(headers, 'x-forwarded-proto')?.split(',')[0]?.trim() === 'https';
}

function setCookie(headers: RouteHeaders, url: string, value: string, maxAgeSeconds: number): string {
  const flags = ['Path=/console', 'HttpOnly', 'SameSite=Strict', `Max-Age=${Math.max(0, maxAgeSeconds)}`];
  if (secure(headers, url)) flags.push('Secure');
  return `${cookieName(headers)}=${value}; ${flags.join('; ')}`;
}

/** Where a sign-in goes back to: a console path of this server only, never another site. */
function nextOf(value: string | null): string {
  return value !== null && /^\/console(?:[/?#]|$)/.test(value) && !value.startsWith('//') ? value : '/console';
}

/** The sign-in part of the console, given the server authenticates. */
export class ConsoleSessions {
  readonly store: SessionStore;
  private readonly verify: (token: string) => Promise<AuthInfo>;

  constructor(options: ConsoleSignIn) {
    this.verify = options.verify;
    this.store = new SessionStore({
      ...(options.maxSessions === undefined ? {} : { maxSessions: options.maxSessions }),
      ...(options.sessionTtlMs === undefined ? {} : { ttlMs: options.sessionTtlMs }),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
  }

  /** The edge's `session` hook: the principal of a live session cookie. */
  readonly principal = (headers: RouteHeaders): AuthInfo | undefined => {
    const id = cookieValue(headers);
    return id === undefined ? undefined : this.store.get(id)?.authInfo;
  };

  /**
   * The session a request was answered under: none when it carries an `Authorization` header (the
   * header decides, as at the edge) or no live cookie.
   */
  sessionOf(request: Request): ConsoleSession | undefined {
    if (request.headers.has('authorization')) return undefined;
    const id = cookieValue(requestHeaders(request));
    return id === undefined ? undefined : this.store.get(id);
  }

  /**
   * A form posted under a session must carry its CSRF token (403 otherwise); under a bearer header
   * there is none to carry, and none is needed (another site cannot make a browser send the header).
   */
  refuseForgedForm(request: Request, form: URLSearchParams): Response | undefined {
    const session = this.sessionOf(request);
    if (session === undefined || sameSecret(form.get('csrf') ?? '', session.csrf)) return undefined;
    return htmlPage(
      403,
      'Refused',
      html`<h1>Refused</h1>
        <p>
          This form's security token is missing or out of date, so it may not come from this console. Go back, reload
          the page and send it again.
        </p>
        <p><a href="/console">all tasks</a></p>`,
    );
  }

  /** The edge's `signIn` hook: a browser without credentials goes to the sign-in page (a stale cookie is dropped). */
  readonly redirect = (url: string, headers: RouteHeaders): Response => {
    const response = new Response(null, {
      status: 303,
      headers: { location: `/console/sign-in?${new URLSearchParams({ next: nextOf(url) }).toString()}` },
    });
    if (cookieValue(headers) !== undefined) response.headers.append('set-cookie', setCookie(headers, url, '', 0));
    return response;
  };

  routes(): HttpRoute[] {
    const form = async (request: Request): Promise<Response> => {
      const params = new URL(request.url).searchParams;
      return signInPage(nextOf(params.get('next')), params.has('signed_out') ? 'Signed out.' : null, 200);
    };
    const signIn = async (request: Request, info: HttpRequestInfo): Promise<Response> => {
      const refused = checkOrigin(request);
      if (refused !== undefined) return refused;
      const fields = new URLSearchParams(info.body?.toString('utf8') ?? '');
      const token = (fields.get('token') ?? '').trim();
      const next = nextOf(fields.get('next'));
      if (token === '') return signInPage(next, 'Paste your token.', 400);
      let authInfo: AuthInfo;
      try {
        authInfo = await this.verify(token);
      } catch {
        return signInPage(next, 'That token was refused.', 401);
      }
      const { id, session } = this.store.create(authInfo);
      const seconds = Math.floor((session.expiresAt - session.createdAt) / 1000);
      const response = new Response(null, { status: 303, headers: { location: next } });
      response.headers.append('set-cookie', setCookie(requestHeaders(request), request.url, id, seconds));
      return response;
    };
    const signOut = async (request: Request, info: HttpRequestInfo): Promise<Response> => {
      const refused =
        checkOrigin(request) ?? this.refuseForgedForm(request, new URLSearchParams(info.body?.toString('utf8') ?? ''));
      if (refused !== undefined) return refused;
      const headers = requestHeaders(request);
      const id = cookieValue(headers);
      if (id !== undefined) this.store.delete(id);
      const response = new Response(null, { status: 303, headers: { location: '/console/sign-in?signed_out=1' } });
      response.headers.append('set-cookie', setCookie(headers, request.url, '', 0));
      return response;
    };
    return [
      route('GET', '/console/sign-in', form, { unauthenticated: true }),
      route('POST', '/console/sign-in', signIn, { unauthenticated: true, body: 'form' }),
      route('POST', '/console/sign-out', signOut, { body: 'form', session: this.principal }),
    ];
  }
}

function signInPage(next: string, notice: string | null, status: number): Response {
  return htmlPage(
    status,
    'Sign in',
    html`<h1>Sign in</h1>
      ${notice === null ? '' : html`<p class="card" data-notice><strong>${notice}</strong></p>`}
      <form method="post" action="/console/sign-in" class="card">
        <input type="hidden" name="next" value="${next}" />
        <label>
          <span>token (the one <code>--token</code> takes)</span>
          <input type="password" name="token" autocomplete="current-password" required size="40" />
        </label>
        <p><button type="submit">Sign in</button></p>
      </form>
      <p class="muted">
        The console keeps you signed in with a cookie for this server only, for a working day at most; the token itself
        is not kept in the browser.
      </p>`,
  );
}

function htmlPage(status: number, title: string, body: Html): Response {
  return htmlResponse(page(title, null, body), status);
}
