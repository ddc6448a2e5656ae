/** The production `Ids`: task ids are unguessable and safe to pass on a command line. */
import { describe, expect, it } from 'vitest';
import { systemIds } from '../../src/core/system.js';

describe('systemIds', () => {
  it('task ids are 22 base64url characters, all distinct, and none begins with - (one in 64 would)', () => {
    const ids = Array.from({ length: 20_000 }, () => systemIds.taskId());
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Drawing again must not skew what is left: each of the 63 other first characters still shows.
    expect(new Set(ids.map((id) => id[0])).size).toBe(63);
    // and '-' is still used past the first character.
    expect(ids.some((id) => id.includes('-'))).toBe(true);
  });
});
