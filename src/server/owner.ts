import type { AuthInfo } from '@modelcontextprotocol/server';

/**
 * Who a request acts for (S8, X-56). Tasks are bound to this string at creation and every later
 * request must resolve to the same one to see the task.
 *
 * 1. An authenticated principal (`authInfo`, set by the HTTP `authenticate` hook): `auth:<clientId>`.
 * 2. Else the transport session, when there is one: `session:<id>`.
 * 3. Else the transport's default: `stdio` for a stdio connection (one client per process), and
 *    `anonymous` on the stateless 2026-07-28 HTTP wire, which has no session. Unauthenticated HTTP
 *    callers therefore share one owner and the unguessable 128-bit task id is the capability
 *    deployments that need isolation pass `authenticate`.
 */
export type TransportKind = 'http' | 'stdio';

export const ANONYMOUS_OWNER = 'anonymous';
export const STDIO_OWNER = 'stdio';

/** What `ownerOf` reads of a request: the SDK's `ServerContext`, or the HTTP fast path's context. */
export interface OwnerFacts {
  readonly http?: { readonly authInfo?: AuthInfo | undefined } | undefined;
  readonly sessionId?: string | undefined;
}

/**
 * The owner string of a request, by the rules above.
 *
 * @example
 * ```ts
 * ownerOf({ http: { authInfo: { token, clientId: 'alice', scopes: [] } } }, 'http'); // 'auth:alice'
 * ownerOf({ sessionId: 'abc' }, 'http'); // 'session:abc'
 * ownerOf({}, 'stdio'); // 'stdio'
 * ```
 */
export function ownerOf(ctx: OwnerFacts, transport: TransportKind): string {
  const principal = principalOf(ctx.http?.authInfo);
  if (principal !== undefined) return principal;
  if (typeof ctx.sessionId === 'string' && ctx.sessionId.length > 0) return `session:${ctx.sessionId}`;
  return transport === 'stdio' ? STDIO_OWNER : ANONYMOUS_OWNER;
}

/** The authenticated principal of a request (`auth:<clientId>`), undefined for an anonymous caller. */
export function principalOf(authInfo: AuthInfo | undefined): string | undefined {
  const clientId = authInfo?.clientId;
  return typeof clientId === 'string' && clientId.length > 0 ? `auth:${clientId}` : undefined;
}

/**
 * Who an HTTP request counts against for per-caller limits (rates, sessions, listen streams): its
 * principal, or `anonymous` for every unauthenticated caller together (nothing tells them apart).
 */
export function callerOf(authInfo: AuthInfo | undefined): string {
  return principalOf(authInfo) ?? ANONYMOUS_OWNER;
}
