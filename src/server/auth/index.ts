/**
 * Authentication for `serveHttp` (issue 12 item 2): hooks that bind a principal to each request, so
 * every wire's owner is `auth:<clientId>` (S8) and anonymous callers are refused with 401 and a
 * `WWW-Authenticate` challenge.
 */
export { createBearerAuth, readTokensFile, MIN_TOKEN_LENGTH } from './bearer.js';
export type { BearerAuthOptions } from './bearer.js';
export { createJwtAuth, readJwks } from './jwt.js';
export type { JwtAuthOptions } from './jwt.js';
export { firstOf, unauthenticated, DEFAULT_REALM } from './challenge.js';
export type { Authenticate } from './challenge.js';
