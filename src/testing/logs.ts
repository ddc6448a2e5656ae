import { expect } from 'vitest';
import type { LogBound } from '../core/log.js';
import type { SuiteContext } from './context.js';
import { claimed, created, mustGet, OWNER, rejectsWith, STRANGER, T0 } from './fixtures.js';

const WIDE: LogBound = { maxLines: 1_000, maxBytes: 1_000_000 };
const DONE = { status: 'completed', result: { content: [] }, resultDigest: 'd' } as const;

/** Task logs (issue 18): fenced appends (S3), per-task seq, the bound, reads by cursor, deletion with the task. */
export function logCases({ store, test }: SuiteContext): void {
  test('logs: seq starts at 1 per task; lines carry the epoch, the time, the stream and the fields', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const { fence: other } = await claimed(store(), await created(store()));
    const stored = await store().appendLog(
      fence,
      [
        { stream: 'log', text: 'PASS test_001' },
        { stream: 'log', text: 'FAIL test_002', fields: { test: 'test_002', expected: 3, got: [4] } },
      ],
      WIDE,
      T0 + 5,
    );
    await store().appendLog(fence, [{ stream: 'output', text: 'chunk' }], WIDE, T0 + 6);
    await store().appendLog(other, [{ stream: 'log', text: 'elsewhere' }], WIDE, T0 + 7);
    expect(stored.map((l) => l.seq)).toEqual([1, 2]);
    const read = await store().readLog(OWNER, fence.taskId, { after: 0, limit: 100 }, T0 + 10);
    expect(read).toMatchObject({ lastSeq: 3, dropped: 0, task: { id: fence.taskId, status: 'working' } });
    expect(read?.lines).toEqual([
      { seq: 1, epoch: 1, at: T0 + 5, stream: 'log', text: 'PASS test_001' },
      {
        seq: 2,
        epoch: 1,
        at: T0 + 5,
        stream: 'log',
        text: 'FAIL test_002',
        fields: { test: 'test_002', expected: 3, got: [4] },
      },
      { seq: 3, epoch: 1, at: T0 + 6, stream: 'output', text: 'chunk' },
    ]);
    const elsewhere = await store().readLog(OWNER, other.taskId, { after: 0, limit: 100 }, T0 + 10);
    expect(elsewhere?.lines.map((l) => [l.seq, l.text])).toEqual([[1, 'elsewhere']]);
  });

  test('logs: a read returns the lines after the cursor, at most limit, oldest first', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const lines = Array.from({ length: 7 }, (_, i) => ({ stream: 'log' as const, text: `line ${i + 1}` }));
    await store().appendLog(fence, lines, WIDE, T0 + 1);
    const page = await store().readLog(OWNER, fence.taskId, { after: 2, limit: 3 }, T0 + 2);
    expect(page?.lines.map((l) => l.seq)).toEqual([3, 4, 5]);
    const rest = await store().readLog(OWNER, fence.taskId, { after: 5, limit: 3 }, T0 + 2);
    expect(rest?.lines.map((l) => l.seq)).toEqual([6, 7]);
    const none = await store().readLog(OWNER, fence.taskId, { after: 7, limit: 3 }, T0 + 2);
    expect(none).toMatchObject({ lines: [], lastSeq: 7 });
  });

  test('S3 logs: an append with a stale epoch or another worker rejects lease_lost and writes nothing', async () => {
    const { fence: stale } = await claimed(store(), await created(store()), { leaseMs: 1_000 });
    await store().appendLog(stale, [{ stream: 'log', text: 'first run' }], WIDE, T0 + 1);
    const { fence: current } = await claimed(store(), await mustGet(store(), stale.taskId), { now: T0 + 2_000 });
    await rejectsWith(store().appendLog(stale, [{ stream: 'log', text: 'zombie' }], WIDE, T0 + 2_001), 'lease_lost');
    const impostor = { ...current, workerId: 'worker-9' };
    await rejectsWith(
      store().appendLog(impostor, [{ stream: 'log', text: 'impostor' }], WIDE, T0 + 2_001),
      'lease_lost',
    );
    const never = { taskId: 'no-such-task', workerId: 'worker-1', epoch: 1 };
    await rejectsWith(store().appendLog(never, [{ stream: 'log', text: 'x' }], WIDE, T0), 'lease_lost');
    const read = await store().readLog(OWNER, stale.taskId, { after: 0, limit: 100 }, T0 + 2_002);
    expect(read?.lines.map((l) => l.text)).toEqual(['first run']);
    expect(read?.lastSeq).toBe(1);
    // The re-run's lines follow with the next epoch; no seq is reused.
    const next = await store().appendLog(current, [{ stream: 'log', text: 're-run' }], WIDE, T0 + 2_003);
    expect(next.map((l) => [l.seq, l.epoch])).toEqual([[2, 2]]);
  });

  test('S2 logs: a terminal task takes no more lines (already_terminal), so its log is final', async () => {
    const { fence } = await claimed(store(), await created(store()));
    await store().appendLog(fence, [{ stream: 'log', text: 'before' }], WIDE, T0 + 1);
    await store().cancel(OWNER, fence.taskId, T0 + 2);
    // The cancelled task still holds the lease (S4): the fence holds, the status refuses.
    await rejectsWith(
      store().appendLog(fence, [{ stream: 'log', text: 'after cancel' }], WIDE, T0 + 3),
      'already_terminal',
    );
    const { fence: done } = await claimed(store(), await created(store()));
    await store().finish(done, DONE, T0 + 4);
    await rejectsWith(store().appendLog(done, [{ stream: 'log', text: 'late' }], WIDE, T0 + 5), 'lease_lost');
    const read = await store().readLog(OWNER, fence.taskId, { after: 0, limit: 10 }, T0 + 6);
    expect(read).toMatchObject({ lastSeq: 1, task: { status: 'cancelled' } });
  });

  test('logs: past maxLines the oldest lines are dropped and counted; seq keeps counting', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const bound = { maxLines: 3, maxBytes: 1_000_000 };
    for (let i = 1; i <= 5; i++) await store().appendLog(fence, [{ stream: 'log', text: `l${i}` }], bound, T0 + i);
    await store().appendLog(
      fence,
      [1, 2, 3, 4].map((i) => ({ stream: 'log' as const, text: `batch${i}` })),
      bound,
      T0 + 9,
    );
    const read = await store().readLog(OWNER, fence.taskId, { after: 0, limit: 100 }, T0 + 10);
    expect(read?.lines.map((l) => [l.seq, l.text])).toEqual([
      [7, 'batch2'],
      [8, 'batch3'],
      [9, 'batch4'],
    ]);
    expect(read).toMatchObject({ lastSeq: 9, dropped: 6 });
  });

  test('logs: lines skipped on the way (the writer’s bound) take their seqs and count as dropped', async () => {
    const { fence } = await claimed(store(), await created(store()));
    await store().appendLog(fence, [{ stream: 'log', text: 'first' }], WIDE, T0 + 1);
    const stored = await store().appendLog(fence, [{ stream: 'log', text: 'after a flood' }], WIDE, T0 + 2, 1_000);
    expect(stored.map((l) => l.seq)).toEqual([1_002]);
    const read = await store().readLog(OWNER, fence.taskId, { after: 0, limit: 100 }, T0 + 3);
    // The gap between seq 1 and seq 1002 is what a reader shows as dropped lines.
    expect(read?.lines.map((l) => [l.seq, l.text])).toEqual([
      [1, 'first'],
      [1_002, 'after a flood'],
    ]);
    expect(read).toMatchObject({ lastSeq: 1_002, dropped: 1_000 });
    const stale = { ...fence, epoch: fence.epoch + 1 };
    await rejectsWith(store().appendLog(stale, [{ stream: 'log', text: 'x' }], WIDE, T0 + 4, 5), 'lease_lost');
    expect((await store().readLog(OWNER, fence.taskId, { after: 0, limit: 1 }, T0 + 5))?.dropped).toBe(1_000);
  });

  test('logs: past maxBytes the oldest lines are dropped until the rest fits; the newest is kept', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const bound = { maxLines: 1_000, maxBytes: 25 };
    await store().appendLog(fence, [{ stream: 'log', text: '0123456789' }], bound, T0 + 1);
    await store().appendLog(fence, [{ stream: 'log', text: 'abcdefghij' }], bound, T0 + 2);
    // 10 bytes of text + 8 of fields JSON (`{"n":12}`): 38 > 25 drops lines 1 and 2.
    await store().appendLog(fence, [{ stream: 'log', text: 'ABCDEFGHIJ', fields: { n: 12 } }], bound, T0 + 3);
    const read = await store().readLog(OWNER, fence.taskId, { after: 0, limit: 100 }, T0 + 4);
    expect(read?.lines.map((l) => l.seq)).toEqual([3]);
    expect(read).toMatchObject({ lastSeq: 3, dropped: 2 });
    // A multi-byte text counts its UTF-8 bytes: 8 x 3 bytes = 24 fits alone, and drops line 3 (18 bytes).
    await store().appendLog(fence, [{ stream: 'log', text: '€€€€€€€€' }], bound, T0 + 5);
    const after = await store().readLog(OWNER, fence.taskId, { after: 0, limit: 100 }, T0 + 6);
    expect(after?.lines.map((l) => [l.seq, l.text])).toEqual([[4, '€€€€€€€€']]);
    expect(after?.dropped).toBe(3);
  });

  test('S3 logs: concurrent appends to one task get distinct seqs 1..n', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const stored = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store().appendLog(fence, [{ stream: 'log', text: `c${i}` }], WIDE, T0 + 1)),
    );
    expect(
      stored
        .flat()
        .map((l) => l.seq)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const read = await store().readLog(OWNER, fence.taskId, { after: 0, limit: 100 }, T0 + 2);
    expect(read?.lines).toHaveLength(20);
  });

  test('S8 logs: a foreign owner, an unknown id and an expired task all read null', async () => {
    const { fence } = await claimed(store(), await created(store(), { ttlMs: 60_000 }));
    await store().appendLog(fence, [{ stream: 'log', text: 'secret' }], WIDE, T0 + 1);
    expect(await store().readLog(STRANGER, fence.taskId, { after: 0, limit: 10 }, T0 + 2)).toBeNull();
    expect(await store().readLog(OWNER, 'no-such-task', { after: 0, limit: 10 }, T0 + 2)).toBeNull();
    await store().finish(fence, DONE, T0 + 3);
    expect(await store().readLog(OWNER, fence.taskId, { after: 0, limit: 10 }, T0 + 60_002)).not.toBeNull();
    expect(await store().readLog(OWNER, fence.taskId, { after: 0, limit: 10 }, T0 + 60_003)).toBeNull();
  });

  test('S7 logs: sweeping an expired task deletes its log (a new task under the same id starts at seq 1)', async () => {
    const task = await created(store(), { ttlMs: 60_000 });
    const { fence } = await claimed(store(), task);
    await store().appendLog(
      fence,
      [
        { stream: 'log', text: 'old 1' },
        { stream: 'log', text: 'old 2' },
      ],
      WIDE,
      T0 + 1,
    );
    await store().finish(fence, DONE, T0 + 2);
    expect(await store().sweepExpired(T0 + 120_000, 10)).toBe(1);
    const again = await created(store(), { id: task.id, now: T0 + 120_001 });
    const { fence: fresh } = await claimed(store(), again, { now: T0 + 120_001 });
    const stored = await store().appendLog(fresh, [{ stream: 'log', text: 'new' }], WIDE, T0 + 120_002);
    expect(stored.map((l) => l.seq)).toEqual([1]);
    const read = await store().readLog(OWNER, task.id, { after: 0, limit: 10 }, T0 + 120_003);
    expect(read?.lines.map((l) => l.text)).toEqual(['new']);
    expect(read).toMatchObject({ lastSeq: 1, dropped: 0 });
  });
}
