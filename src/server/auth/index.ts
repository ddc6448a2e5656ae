/**
 * Authentication for `serveHttp` (issue 12 item 2): hooks that bind a principal to each request, so
 * every wire's owner is the principal the hook names (S8: `token:<clientId>`, `jwt:<issuer>#<sub>`)
 * and anonymous callers are refused with 401 and a
 * `WWW-Authenticate` challenge.
 */
export { createBearerAuth, readTokensFile, MIN_TOKEN_LENGTH } from './bearer.js';
export type { BearerAuthOptions } from './bearer.js';
export { createJwtAuth, readJwks } from './jwt.js';
export type { JwtAuthOptions } from './jwt.js';
export { firstOf, unauthenticated, DEFAULT_REALM } from './challenge.js';
export { adoptLegacyOwners } from './legacy-owners.js';
export type { LegacyOwnerReport } from './legacy-owners.js';
export type { Authenticate } from './challenge.js';
