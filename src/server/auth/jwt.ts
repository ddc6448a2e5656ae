import { readFile } from 'node:fs/promises';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { TerminusError } from '../../core/errors.js';
import { jwtPrincipal, PRINCIPAL_KEY } from '../owner.js';
import { bearerToken, DEFAULT_REALM, unauthenticated, type Authenticate } from './challenge.js';

/** Options of `createJwtAuth`: who issues the tokens, for whom, and where the keys are. */
export interface JwtAuthOptions {
  /** Required `iss`. */
  readonly issuer: string;
  /** Required `aud` (one of, when several). */
  readonly audience: string | readonly string[];
  /**
   * Where the verification keys are: a JWKS document (`{ keys: [...] }`), or a URL fetched by jose
   * (cached; refetched at most every 30 s when a token names an unknown `kid`).
   */
  readonly jwks: JSONWebKeySet | URL;
  /** Accepted `alg`s; default RS256, ES256, EdDSA (never `none`, never HMAC with a public key). */
  readonly algorithms?: readonly string[];
  /** Clock skew tolerated on `exp` / `nbf`, seconds; default 30. */
  readonly clockToleranceSeconds?: number;
  readonly realm?: string;
  /** Let requests without `Authorization` through as anonymous; default false (they get 401). */
  readonly allowAnonymous?: boolean;
}

const DEFAULT_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];

/**
 * JWT bearer tokens verified with jose: signature against the JWKS, `iss`, `aud`, `exp`/`nbf`; the
 * `sub` claim is the client id and the principal is `jwt:<issuer>#<sub>` (`jwtPrincipal`), so a
 * subject never shares an owner with a static token's client id or another issuer's subject; the
 * `scope` claim (space-separated) gives the scopes.
 * @example
 * const authenticate = createJwtAuth({
 *   issuer: 'https://login.example.com/',
 *   audience: 'mcp-terminus',
 *   jwks: new URL('https://login.example.com/.well-known/jwks.json'),
 * });
 */
export function createJwtAuth(options: JwtAuthOptions): Authenticate {
  const realm = options.realm ?? DEFAULT_REALM;
  const keys = options.jwks instanceof URL ? createRemoteJWKSet(options.jwks) : createLocalJWKSet(options.jwks);
  const verifyOptions = {
    issuer: options.issuer,
    audience: typeof options.audience === 'string' ? options.audience : [...options.audience],
    algorithms: [...(options.algorithms ?? DEFAULT_ALGORITHMS)],
    clockTolerance: options.clockToleranceSeconds ?? 30,
  };
  return async (req) => {
    const token = bearerToken(req, realm);
    if (token === undefined) {
      if (options.allowAnonymous === true) return undefined;
      throw unauthenticated(realm, 'missing');
    }
    let payload;
    try {
      ({ payload } = await jwtVerify(token, keys, verifyOptions));
    } catch (error) {
      throw unauthenticated(realm, 'invalid', describe(error));
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') {
      throw unauthenticated(realm, 'invalid', 'the token has no sub claim');
    }
    const scope = typeof payload.scope === 'string' ? payload.scope.split(' ').filter((s) => s !== '') : [];
    return {
      token,
      clientId: payload.sub,
      scopes: scope,
      extra: { [PRINCIPAL_KEY]: jwtPrincipal(options.issuer, payload.sub) },
      ...(payload.exp === undefined ? {} : { expiresAt: payload.exp }),
    };
  };
}

/**
 * A JWKS from a file, or a URL for `createJwtAuth` when `source` starts with `http://` or `https://`.
 * @example
 * const jwks = await readJwks(process.env.JWKS ?? './jwks.json');
 * const authenticate = createJwtAuth({ issuer: 'https://login.example.com/', audience: 'mcp-terminus', jwks });
 */
export async function readJwks(source: string): Promise<JSONWebKeySet | URL> {
  if (/^https?:\/\//i.test(source)) return new URL(source);
  let value: unknown;
  try {
    value = JSON.parse(await readFile(source, 'utf8'));
  } catch (error) {
    throw new TerminusError('invalid_argument', `JWKS file ${source}: ${(error as Error).message}`, { cause: error });
  }
  if (typeof value !== 'object' || value === null || !Array.isArray((value as { keys?: unknown }).keys)) {
    throw new TerminusError('invalid_argument', `JWKS file ${source}: expected {"keys": [...]}`);
  }
  return value as JSONWebKeySet;
}

/** jose's code (`ERR_JWT_EXPIRED`, `ERR_JWT_CLAIM_VALIDATION_FAILED`...) says why, without the token. */
function describe(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const claim = (error as { claim?: unknown }).claim;
  if (code === 'ERR_JWT_EXPIRED') return 'token expired';
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && typeof claim === 'string') return `${claim} claim rejected`;
  if (code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED')
    return 'signature not verified';
  if (code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JOSE_GENERIC') return 'keys unavailable';
  return 'malformed token';
}
