import type { AuthInfo } from '@modelcontextprotocol/server';

/**
 * Who a request acts for (S8, X-56). Tasks are bound to this string at creation and every later
 * request must resolve to the same one to see the task.
 *
 * 1. An authenticated principal (`authInfo`, set by the HTTP `authenticate` hook), named by the
 *    source that vouched for it, so two sources never name one owner (`principalOf`):
 *    `token:<clientId>` for a static bearer token, `jwt:<issuer>#<sub>` for a JWT, and
 *    `auth:<clientId>` for any other hook.
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

/**
 * The key of `AuthInfo.extra` where our `authenticate` hooks (`createBearerAuth`, `createJwtAuth`)
 * put the principal they vouch for. A hook that sets none names `auth:<clientId>`.
 */
export const PRINCIPAL_KEY = 'mcp-terminus/principal';

/** Owners of tasks stored before principals named their source, and of hooks that set no `PRINCIPAL_KEY`. */
export const LEGACY_PRINCIPAL_PREFIX = 'auth:';

/**
 * The principal of a static bearer token's client id.
 * @example tokenPrincipal('alice') // 'token:alice' (never the JWT subject "alice", which is jwt:<issuer>#alice)
 */
export function tokenPrincipal(clientId: string): string {
  return `token:${clientId}`;
}

/**
 * The principal of a JWT subject: `jwt:<issuer>#<sub>`. Subjects are unique per issuer only, so the
 * issuer is part of it; `%` and `#` in the issuer are percent-encoded (an issuer URL has no
 * fragment), so the first `#` always ends it and two (issuer, subject) pairs never meet.
 * @example jwtPrincipal('https://id.example.com', 'alice') // 'jwt:https://id.example.com#alice'
 */
export function jwtPrincipal(issuer: string, subject: string): string {
  return `jwt:${issuer.replaceAll('%', '%25').replaceAll('#', '%23')}#${subject}`;
}

/**
 * The authenticated principal of a request, undefined for an anonymous caller: what the hook put
 * under `PRINCIPAL_KEY`, else `auth:<clientId>`.
 * @example principalOf({ token, clientId: 'ci', scopes: [], extra: { [PRINCIPAL_KEY]: 'token:ci' } }) // 'token:ci'
 * @example principalOf({ token, clientId: 'ci', scopes: [] }) // 'auth:ci' (a hook of your own)
 */
export function principalOf(authInfo: AuthInfo | undefined): string | undefined {
  const clientId = authInfo?.clientId;
  if (typeof clientId !== 'string' || clientId.length === 0) return undefined;
  const named = authInfo?.extra?.[PRINCIPAL_KEY];
  return typeof named === 'string' && named.length > 0 ? named : `${LEGACY_PRINCIPAL_PREFIX}${clientId}`;
}

/**
 * Who an HTTP request counts against for per-caller limits (rates, sessions, listen streams): its
 * principal, or `anonymous` for every unauthenticated caller together (nothing tells them apart).
 */
export function callerOf(authInfo: AuthInfo | undefined): string {
  return principalOf(authInfo) ?? ANONYMOUS_OWNER;
}
