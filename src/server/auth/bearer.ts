import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { TerminusError } from '../../core/errors.js';
import { isRecord } from '../../core/json.js';
import { PRINCIPAL_KEY, tokenPrincipal } from '../owner.js';
import { bearerToken, DEFAULT_REALM, unauthenticated, type Authenticate } from './challenge.js';

/** Options of `createBearerAuth`. */
export interface BearerAuthOptions {
  /** Static tokens: token -> client id (the owner becomes `token:<clientId>`). */
  readonly tokens: ReadonlyMap<string, string> | Readonly<Record<string, string>>;
  /** `realm` of the `WWW-Authenticate` challenge; default `mcp-terminus`. */
  readonly realm?: string;
  /** Let requests without `Authorization` through as anonymous; default false (they get 401). */
  readonly allowAnonymous?: boolean;
}

/** Tokens shorter than this are refused when loaded: 16 random bytes in base64url are 22 characters. */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Static bearer tokens mapped to client ids (service accounts, a shared team token); the principal
 * is `token:<clientId>`, never the same as a JWT subject's (`jwt:<issuer>#<sub>`). Tokens are
 * compared by their SHA-256 digests with `timingSafeEqual`, so the time taken says nothing about how
 * much of a guess matched.
 * @example
 * const authenticate = createBearerAuth({ tokens: await readTokensFile('./tokens.json') });
 * await server.serveHttp({ authenticate });
 */
export function createBearerAuth(options: BearerAuthOptions): Authenticate {
  const realm = options.realm ?? DEFAULT_REALM;
  const entries = options.tokens instanceof Map ? [...options.tokens] : Object.entries(options.tokens);
  const table = entries.map(([token, clientId]) => {
    checkEntry(token, clientId);
    return { digest: sha256(token), clientId };
  });
  return (req) => {
    const token = bearerToken(req, realm);
    if (token === undefined) {
      if (options.allowAnonymous === true) return Promise.resolve(undefined);
      return Promise.reject(unauthenticated(realm, 'missing'));
    }
    const digest = sha256(token);
    // Every entry is compared, matched or not: the loop's time does not depend on where a token sits.
    let clientId: string | undefined;
    for (const entry of table) if (timingSafeEqual(entry.digest, digest)) clientId = entry.clientId;
    if (clientId === undefined) return Promise.reject(unauthenticated(realm, 'invalid', 'unknown token'));
    return Promise.resolve({ token, clientId, scopes: [], extra: { [PRINCIPAL_KEY]: tokenPrincipal(clientId) } });
  };
}

/**
 * Reads a tokens file: a JSON object `{ "<token>": "<client id>", ... }`. A token under 16
 * characters or an empty client id is refused with `invalid_argument` naming the file.
 * @example
 * // tokens.json: { "replace-with-a-long-random-token": "ci-bot" }
 * const tokens = await readTokensFile('./tokens.json');
 * const authenticate = createBearerAuth({ tokens });
 */
export async function readTokensFile(path: string): Promise<Map<string, string>> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new TerminusError('invalid_argument', `tokens file ${path}: ${(error as Error).message}`, { cause: error });
  }
  if (!isRecord(value))
    throw new TerminusError('invalid_argument', `tokens file ${path}: expected {"<token>": "<client id>"}`);
  const tokens = new Map<string, string>();
  for (const [token, clientId] of Object.entries(value)) {
    if (typeof clientId !== 'string') {
      throw new TerminusError('invalid_argument', `tokens file ${path}: the client id of each token must be a string`);
    }
    try {
      checkEntry(token, clientId);
    } catch (error) {
      throw new TerminusError('invalid_argument', `tokens file ${path}: ${(error as Error).message}`);
    }
    tokens.set(token, clientId);
  }
  if (tokens.size === 0) throw new TerminusError('invalid_argument', `tokens file ${path}: no tokens`);
  return tokens;
}

function checkEntry(token: string, clientId: string): void {
  if (token.length < MIN_TOKEN_LENGTH || !/^[A-Za-z0-9\-._~+/]+=*$/.test(token)) {
    throw new TerminusError(
      'invalid_argument',
      `a token must be at least ${MIN_TOKEN_LENGTH} characters of [A-Za-z0-9-._~+/] (e.g. openssl rand -base64 24)`,
    );
  }
  if (clientId.length === 0) throw new TerminusError('invalid_argument', 'a client id must not be empty');
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
