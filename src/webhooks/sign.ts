import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { TerminusError } from '../core/errors.js';

/**
 * Standard Webhooks signing (standardwebhooks.com): `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "<webhook-id>.<webhook-timestamp>.<body>">` keyed with the base64-decoded part of a `whsec_`
 * secret. node:crypto rather than the `standardwebhooks` package: signing is these few lines, and
 * the package computes SHA-256 in JavaScript (fast-sha256) where node:crypto is native; its
 * verifier is what receivers use, and our test checks our headers against the spec's own example.
 */
const PREFIX = 'whsec_';

/** Rejects `invalid_argument` unless `secret` is `whsec_` + base64 of 24..64 bytes. */
export function checkSecret(secret: string, field = 'secret'): Buffer {
  const key = secret.startsWith(PREFIX) ? Buffer.from(secret.slice(PREFIX.length), 'base64') : Buffer.alloc(0);
  const canonical = key.toString('base64').replace(/=+$/, '') === secret.slice(PREFIX.length).replace(/=+$/, '');
  if (!canonical || key.length < 24 || key.length > 64) {
    throw new TerminusError(
      'invalid_argument',
      `${field} must be "whsec_" followed by base64 of 24 to 64 random bytes (for example ${newSecret().slice(0, 12)}...)`,
      { details: { field } },
    );
  }
  return key;
}

/** A fresh secret: `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** The `webhook-signature` value for one message. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', checkSecret(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** Whether any `v1,` signature of `header` (space-separated) matches: what a receiver checks. */
export function verify(secret: string, id: string, timestampSeconds: number, body: string, header: string): boolean {
  const expected = Buffer.from(sign(secret, id, timestampSeconds, body));
  return header.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
