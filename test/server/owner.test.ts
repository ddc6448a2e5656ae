import { describe, expect, it } from 'vitest';
import { ownerOf } from '../../src/server/owner.js';

describe('ownerOf (S8)', () => {
  const auth = { token: 't', clientId: 'alice', scopes: [] };

  it('an authenticated principal wins over a session and the transport default', () => {
    expect(ownerOf({ http: { authInfo: auth }, sessionId: 's1' }, 'http')).toBe('auth:alice');
    expect(ownerOf({ http: { authInfo: auth } }, 'stdio')).toBe('auth:alice');
  });

  it('else the session, when the transport has one', () => {
    expect(ownerOf({ sessionId: 's1' }, 'http')).toBe('session:s1');
  });

  it('else anonymous on stateless HTTP and stdio on a stdio connection', () => {
    expect(ownerOf({}, 'http')).toBe('anonymous');
    expect(ownerOf({ http: {} }, 'http')).toBe('anonymous');
    expect(ownerOf({}, 'stdio')).toBe('stdio');
  });
});
