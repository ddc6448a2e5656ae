/** The production `Ids`: task ids are unguessable and safe to pass on a command line. */
import { describe, expect, it } from 'vitest';
import { systemClock, systemIds } from '../../src/core/system.js';

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

describe('systemClock', () => {
  it('sleep resolves after its time and, aborted first, rejects with the signal’s own reason (the Clock port)', async () => {
    await expect(systemClock.sleep(1)).resolves.toBeUndefined();
    const reason = { why: 'stop' };
    const early = new AbortController();
    early.abort(reason);
    await expect(systemClock.sleep(10_000, early.signal)).rejects.toBe(reason);
    const later = new AbortController();
    const sleeping = systemClock.sleep(10_000, later.signal);
    later.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    // A sleep that ran out leaves no listener behind on its signal.
    const kept = new AbortController();
    await systemClock.sleep(1, kept.signal);
    kept.abort(reason);
  });
});
