/**
 * The credential a command carries (`--token`, `--header`), as the ledger's identity check sees it:
 * a bearer JWT stands for its issuer and subject (a refreshed token is the same principal), other
 * credentials for themselves, and headers that carry none (a trace id) are no identity at all. The
 * ledger keeps a fingerprint salted by the operation id, never the credential.
 */
import { describe, expect, it } from 'vitest';
import { checkIdentity, identityFingerprint } from '../../src/executor/identity.js';
import { credentialOf, serverCredential } from '../../src/cli/credential.js';

const jwt = (claims: Record<string, unknown>): string =>
  ['{"alg":"RS256"}', JSON.stringify(claims), 'signature']
    .map((part, i) => (i < 2 ? Buffer.from(part).toString('base64url') : part))
    .join('.');

describe('credentialOf', () => {
  it('a refreshed JWT of the same issuer and subject is the same credential; another subject is not', () => {
    const first = credentialOf({ authorization: `Bearer ${jwt({ iss: 'https://idp', sub: 'alice', exp: 1 })}` });
    const refreshed = credentialOf({ authorization: `Bearer ${jwt({ iss: 'https://idp', sub: 'alice', exp: 2 })}` });
    const bob = credentialOf({ authorization: `Bearer ${jwt({ iss: 'https://idp', sub: 'bob', exp: 1 })}` });
    expect(first).toBe(refreshed);
    expect(first).not.toBe(bob);
    expect(first).not.toContain('signature');
  });

  it('a static token stands for itself; headers without a credential are none; stdio servers get none', () => {
    expect(credentialOf({ authorization: 'Bearer tok-a' })).not.toBe(credentialOf({ authorization: 'Bearer tok-b' }));
    expect(credentialOf({ 'x-api-key': 'k1' })).not.toBeNull();
    expect(credentialOf({ traceparent: '00-abc-def-01' })).toBeNull();
    expect(credentialOf({})).toBeNull();
    expect(serverCredential('stdio:node server.js', { authorization: 'Bearer tok-a' })).toBeNull();
    expect(serverCredential('http://127.0.0.1:3000/mcp', { authorization: 'Bearer tok-a' })).not.toBeNull();
  });
});

describe('checkIdentity', () => {
  it('refuses another credential and a missing one; a record without a fingerprint is anyone holding its ids', () => {
    const record = { id: 'op_1', identity: identityFingerprint('op_1', 'alice') };
    expect(checkIdentity(record, 'alice')).toEqual({ ok: true });
    expect(checkIdentity(record, 'bob')).toEqual({ ok: false, why: 'other' });
    expect(checkIdentity(record, null)).toEqual({ ok: false, why: 'missing' });
    expect(checkIdentity({ id: 'op_2' }, 'bob')).toEqual({ ok: true });
    expect(checkIdentity({ id: 'op_2', identity: null }, null)).toEqual({ ok: true });
  });

  it('the fingerprint is salted by the operation: one credential gives two values on two operations', () => {
    expect(identityFingerprint('op_1', 'alice')).not.toBe(identityFingerprint('op_2', 'alice'));
    expect(identityFingerprint('op_1', 'alice')).not.toContain('alice');
  });
});
