/**
 * Which credential an operation was submitted under, so that a waiter with another one is refused
 * before it sends anything. The server answers a task of another principal as not found (S8: not
 * found and wrong owner are one answer), which a resume cannot tell from a task the server lost:
 * without this check, resuming with the wrong credential turned a running operation UNKNOWN.
 *
 * The ledger keeps a fingerprint, never the credential: SHA-256 over the operation id (a salt of
 * 122 random bits, different for every record) and the credential, so two records of one token do
 * not share a value and no table of common secrets applies to a stolen ledger.
 */
import { createHash } from 'node:crypto';
import type { ToolOperation } from './operation.js';

/** The fingerprint of `credential` for the operation `operationId` (hex, 256 bits). */
export function identityFingerprint(operationId: string, credential: string): string {
  return createHash('sha256').update(`terminus-identity/1\0${operationId}\0${credential}`, 'utf8').digest('hex');
}

/** How a waiter's credential compares with the one an operation was submitted under. */
export type IdentityCheck =
  | { readonly ok: true }
  /** `missing`: the operation has a credential and the waiter none; `other`: they differ. */
  | { readonly ok: false; readonly why: 'missing' | 'other' };

/**
 * Whether a waiter holding `credential` (null: none) may drive `record`. A record without a
 * fingerprint (submitted without a credential) is anyone's who holds its ids: no check.
 */
export function checkIdentity(
  record: Pick<ToolOperation, 'id' | 'identity'>,
  credential: string | null,
): IdentityCheck {
  const stored = record.identity ?? null;
  if (stored === null) return { ok: true };
  if (credential === null) return { ok: false, why: 'missing' };
  return identityFingerprint(record.id, credential) === stored ? { ok: true } : { ok: false, why: 'other' };
}

/** Header names that carry a credential; any other header (a trace id, say) is not the caller's identity. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$|api-?key|token|auth|secret/;

/**
 * The credential in `headers` (names in any case), or null when there is none. A bearer JWT stands for its issuer and subject, not its bytes: a refreshed token of the same
 * principal is the same credential. Other credentials stand for themselves.
 */
export function credentialOf(headers: Readonly<Record<string, string>>): string | null {
  const parts = Object.entries(headers)
    .map(([name, value]): [string, string] => [name.toLowerCase(), value])
    .filter(([name]) => CREDENTIAL_HEADER.test(name))
    .map(([name, value]) => `${name}=${name === 'authorization' ? (jwtPrincipal(value) ?? value) : value}`)
    .sort();
  return parts.length === 0 ? null : parts.join('\n');
}

/** `jwt iss sub` of a `Bearer <JWT>` value (the claims read, not verified: the server verifies), else null. */
function jwtPrincipal(value: string): string | null {
  const token = /^Bearer\s+(\S+)$/i.exec(value.trim())?.[1];
  const payload = token?.split('.');
  if (payload?.length !== 3) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof claims.sub !== 'string' || claims.sub === '') return null;
    return `jwt ${typeof claims.iss === 'string' ? claims.iss : ''} ${claims.sub}`;
  } catch {
    return null;
  }
}
