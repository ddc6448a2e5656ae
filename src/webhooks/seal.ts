import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { TerminusError } from '../core/errors.js';

/**
 * Webhook secrets at rest. A task keeps the secret of each of its endpoints (the caller's, or the
 * operator's) for as long as its deliveries may be retried, in the task store: whoever reads the
 * database, or a backup of it, could sign webhooks as this server. With a server key (`--webhook-key`)
 * each secret is sealed before it is stored (AES-256-GCM, a random 96-bit nonce per secret) and
 * opened only to sign an attempt; without one it is stored as given.
 *
 * The key is derived from the operator's material with SHA-256 under a fixed label, so any string
 * of at least 32 characters serves (`openssl rand -base64 32`). Several keys may be given: the first
 * seals, each opens, so a key is rotated by putting the new one first and dropping the old one once
 * no delivery sealed with it is pending (a week with the default retry schedule and retention).
 */
const PREFIX = 'sealed:v1:';
const LABEL = 'mcp-terminus webhook secrets v1\u0000';
const NONCE = 12;
const TAG = 16;

/** The least key material taken: 32 characters of a random base64 string hold 192 bits. */
export const MIN_KEY_CHARACTERS = 32;

/** A derived key; `id` (8 hex characters of a hash of it) names it in messages, never the key. */
export interface SecretsKey {
  readonly key: Buffer;
  readonly id: string;
}

/** Derives the key from `material`; `invalid_argument` when it is shorter than `MIN_KEY_CHARACTERS`. */
export function secretsKey(material: string): SecretsKey {
  if (material.length < MIN_KEY_CHARACTERS) {
    throw new TerminusError(
      'invalid_argument',
      `a webhook key must be at least ${MIN_KEY_CHARACTERS} characters (for example: openssl rand -base64 32)`,
      { details: { field: 'webhookKey' } },
    );
  }
  const key = createHash('sha256').update(LABEL).update(material).digest();
  return { key, id: createHash('sha256').update(key).digest('hex').slice(0, 8) };
}

/** Whether a stored secret is sealed (rather than the `whsec_` secret itself). */
export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** The secret as it is stored under `key`: `sealed:v1:` + base64url of nonce, ciphertext and tag. */
export function sealSecret(secret: string, key: SecretsKey): string {
  const nonce = randomBytes(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key.key, nonce);
  const sealed = Buffer.concat([nonce, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return PREFIX + sealed.toString('base64url');
}

/**
 * The secret of a stored one: itself when it was stored unsealed, else opened with the first of
 * `keys` that opens it. `unavailable` naming what to do when none does (no key given, or the key
 * that sealed it is not among them): the delivery attempt fails and is retried on its schedule,
 * so giving the key back delivers it.
 */
export function openSecret(stored: string, keys: readonly SecretsKey[]): string {
  if (!isSealed(stored)) return stored;
  const sealed = Buffer.from(stored.slice(PREFIX.length), 'base64url');
  if (sealed.length <= NONCE + TAG) throw cannotOpen('it is damaged', keys);
  const nonce = sealed.subarray(0, NONCE);
  const tag = sealed.subarray(sealed.length - TAG);
  const body = sealed.subarray(NONCE, sealed.length - TAG);
  for (const key of keys) {
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.key, nonce);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      // Not this key: try the next.
    }
  }
  throw cannotOpen(keys.length === 0 ? 'no --webhook-key was given' : 'it was sealed with another --webhook-key', keys);
}

function cannotOpen(why: string, keys: readonly SecretsKey[]): TerminusError {
  const given = keys.length === 0 ? '' : ` (keys given: ${keys.map((k) => k.id).join(', ')})`;
  return new TerminusError(
    'unavailable',
    `the stored webhook secret cannot be opened: ${why}${given}; start the server with the key that sealed it`,
  );
}
