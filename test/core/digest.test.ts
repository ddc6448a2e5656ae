import { describe, expect, it } from 'vitest';
import { canonicalJson, MAX_DIGEST_DEPTH, requestDigest } from '../../src/core/digest.js';

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

  it('refuses a value nested deeper than MAX_DIGEST_DEPTH with invalid_argument, not a RangeError', () => {
    const nested = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));
    expect(canonicalJson(nested(MAX_DIGEST_DEPTH))).toBe('['.repeat(MAX_DIGEST_DEPTH) + ']'.repeat(MAX_DIGEST_DEPTH));
    // 5,000 levels overflowed the key sort (and JSON.stringify) with "Maximum call stack size exceeded".
    for (const levels of [MAX_DIGEST_DEPTH + 1, 5_000, 100_000]) {
      expect(() => requestDigest('report', { deep: nested(levels) })).toThrow(
        expect.objectContaining({
          code: 'invalid_argument',
          message: `value nests deeper than ${MAX_DIGEST_DEPTH} levels`,
        }),
      );
    }
  });
});
