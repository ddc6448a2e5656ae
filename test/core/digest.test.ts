import { describe, expect, it } from 'vitest';
import { canonicalJson, requestDigest } from '../../src/core/digest.js';

describe('canonical digests', () => {
  it('ignores key order at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    );
  });

  it('binds tool and arguments (S5)', () => {
    const a = requestDigest('report', { pages: 3 });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(requestDigest('report', { pages: 3 })).toBe(a);
    expect(requestDigest('report', { pages: 4 })).not.toBe(a);
    expect(requestDigest('other', { pages: 3 })).not.toBe(a);
  });
});
