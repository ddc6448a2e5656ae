import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { TerminusError } from '../../core/errors.js';

/**
 * The hook `serveHttp({ authenticate })` takes: the principal of a request, `undefined` for an
 * anonymous caller, or a rejection (answered 401 with `WWW-Authenticate`, never reaching a handler).
 */
export type Authenticate = (req: IncomingMessage) => Promise<AuthInfo | undefined>;

/** Realm named in our challenges unless the caller picks one. */
export const DEFAULT_REALM = 'mcp-terminus';

/**
 * A 401 with its RFC 6750 challenge in `details.challenge`, which the HTTP edge sends as
 * `WWW-Authenticate`. No `error` attribute when the request carried no credentials (RFC 6750
 * section 3.1); `invalid_token` when it carried a bad one.
 */
export function unauthenticated(realm: string, reason: 'missing' | 'invalid', description?: string): TerminusError {
  const attributes = [`realm="${quote(realm)}"`];
  if (reason === 'invalid') {
    attributes.push('error="invalid_token"');
    if (description !== undefined) attributes.push(`error_description="${quote(description)}"`);
  }
  return new TerminusError(
    'unauthenticated',
    reason === 'missing' ? 'Authentication required: send Authorization: Bearer <token>' : 'Invalid bearer token',
    { details: { challenge: `Bearer ${attributes.join(', ')}` } },
  );
}

/** The token of `Authorization: Bearer <token>`, `undefined` without one; another scheme is invalid. */
export function bearerToken(req: IncomingMessage, realm: string): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined || header === '') return undefined;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  if (match === null) throw unauthenticated(realm, 'invalid', 'expected Authorization: Bearer <token>');
  return match[1];
}

/**
 * The first hook that names a principal wins: a bearer table for service tokens beside a JWT issuer
 * for people. When every hook rejects, the last rejection is the answer.
 * @example
 * const authenticate = firstOf(
 *   createBearerAuth({ tokens: await readTokensFile('./tokens.json') }),
 *   createJwtAuth({ issuer: 'https://login.example.com/', audience: 'mcp-terminus', jwks: await readJwks('./jwks.json') }),
 * );
 * await server.serveHttp({ authenticate });
 */
export function firstOf(...hooks: readonly Authenticate[]): Authenticate {
  return async (req) => {
    let last: unknown = new TerminusError('unauthenticated', 'no authentication configured');
    for (const hook of hooks) {
      try {
        const info = await hook(req);
        if (info !== undefined) return info;
      } catch (error) {
        last = error;
      }
    }
    throw last;
  };
}

function quote(text: string): string {
  return text.replace(/["\\]/g, '');
}
