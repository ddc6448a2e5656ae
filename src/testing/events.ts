import { expect } from 'vitest';
import type { LogBound } from '../core/log.js';
import type { OrderedEvent } from '../core/task-events.js';
import type { TaskStore } from '../store/port.js';
import type { SuiteContext } from './context.js';
import { claimed, created, mustGet, OWNER, rejectsWith, STRANGER, T0 } from './fixtures.js';

const WIDE: LogBound = { maxLines: 1_000, maxBytes: 1_000_000 };
const ASK = { method: 'elicitation/create', params: { message: 'Proceed?' } };

async function allEvents(store: TaskStore, id: string, now = T0 + 100): Promise<OrderedEvent[]> {
  const read = await store.readEvents(OWNER, id, { after: 0, limit: 1000 }, now);
  expect(read, `events of ${id} should be readable`).not.toBeNull();
  return read?.events ?? [];
}

/** Ordered task events (issue 32): one gap-free sequence per task, written in the commit of the change. */
export function eventCases({ store, test }: SuiteContext): void {
  test('events: every visible change is one event, numbered 1, 2, 3, ... per task in the order of the writes', async () => {
    const { fence } = await claimed(store(), await created(store(), { statusMessage: 'queued' }));
    await store().progress(fence, { done: 1, total: 4, message: 'reading' }, T0 + 1);
    await store().requestInput(fence, 'confirm', ASK, T0 + 2);
    await store().respond(OWNER, fence.taskId, { confirm: { action: 'accept' } }, T0 + 3);
    await store().appendLog(
      fence,
      [
        { stream: 'log', text: 'one' },
        { stream: 'output', text: 'two', fields: { n: 2 } },
      ],
      WIDE,
      T0 + 4,
    );
    const done = await store().finish(
      fence,
      { status: 'completed', result: { content: [] }, resultDigest: 'd' },
      T0 + 5,
    );
    expect(done.task.eventSeq).toBe(9);
    expect((await mustGet(store(), fence.taskId, T0 + 6)).eventSeq).toBe(9);
    expect(await allEvents(store(), fence.taskId)).toEqual([
      { seq: 1, at: T0, kind: 'status', status: 'working', statusMessage: 'queued' },
      { seq: 2, at: T0 + 1, kind: 'progress', progress: { done: 1, total: 4, message: 'reading' } },
      { seq: 3, at: T0 + 2, kind: 'input_requested', key: 'confirm', request: ASK },
      { seq: 4, at: T0 + 2, kind: 'status', status: 'input_required', statusMessage: 'reading' },
      { seq: 5, at: T0 + 3, kind: 'input_answered', keys: ['confirm'] },
      { seq: 6, at: T0 + 3, kind: 'status', status: 'working', statusMessage: 'reading' },
      {
        seq: 7,
        at: T0 + 4,
        kind: 'log',
        logSeq: 1,
        stream: 'log',
        line: { seq: 1, epoch: 1, at: T0 + 4, stream: 'log', text: 'one' },
      },
      {
        seq: 8,
        at: T0 + 4,
        kind: 'log',
        logSeq: 2,
        stream: 'output',
        line: { seq: 2, epoch: 1, at: T0 + 4, stream: 'output', text: 'two', fields: { n: 2 } },
      },
      { seq: 9, at: T0 + 5, kind: 'status', status: 'completed', statusMessage: 'reading', resultDigest: 'd' },
    ]);
  });

  test('events: a read returns the events after the cursor, at most limit, oldest first, and the last seq', async () => {
    const { fence } = await claimed(store(), await created(store()));
    for (let i = 1; i <= 6; i++) await store().progress(fence, { done: i }, T0 + i);
    const page = await store().readEvents(OWNER, fence.taskId, { after: 2, limit: 3 }, T0 + 10);
    expect(page?.events.map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(page?.lastSeq).toBe(7);
    const rest = await store().readEvents(OWNER, fence.taskId, { after: 5, limit: 3 }, T0 + 10);
    expect(rest?.events.map((e) => e.seq)).toEqual([6, 7]);
    const none = await store().readEvents(OWNER, fence.taskId, { after: 7, limit: 3 }, T0 + 10);
    expect(none).toMatchObject({ events: [], lastSeq: 7, task: { id: fence.taskId, eventSeq: 7 } });
  });

  test('events: other tasks keep their own sequence', async () => {
    const a = await created(store(), { tool: 'other' });
    const b = await created(store());
    const { fence } = await claimed(store(), b);
    await store().progress(fence, { done: 1 }, T0 + 1);
    expect((await allEvents(store(), a.id)).map((e) => e.seq)).toEqual([1]);
    expect((await allEvents(store(), b.id)).map((e) => e.seq)).toEqual([1, 2]);
  });

  test('events: a refused write appends nothing, so the sequence has no gap (S2, S3)', async () => {
    const { fence: stale } = await claimed(store(), await created(store()), { leaseMs: 1_000 });
    await store().progress(stale, { done: 1 }, T0 + 1);
    const { fence } = await claimed(store(), await mustGet(store(), stale.taskId), { now: T0 + 2_000 });
    await rejectsWith(store().progress(stale, { done: 9 }, T0 + 2_001), 'lease_lost');
    await rejectsWith(store().appendLog(stale, [{ stream: 'log', text: 'zombie' }], WIDE, T0 + 2_001), 'lease_lost');
    await store().requestInput(fence, 'k', ASK, T0 + 2_002);
    // The same key again is no new request: no event.
    await store().requestInput(fence, 'k', ASK, T0 + 2_003);
    // An answer for a key that is not outstanding changes nothing.
    await store().respond(OWNER, fence.taskId, { other: 1 }, T0 + 2_004);
    await store().cancel(OWNER, fence.taskId, T0 + 2_005);
    // Terminal: a second cancel, a late finish, progress and log lines add nothing.
    await store().cancel(OWNER, fence.taskId, T0 + 2_006);
    await rejectsWith(store().progress(fence, { done: 2 }, T0 + 2_008), 'already_terminal');
    await rejectsWith(
      store().appendLog(fence, [{ stream: 'log', text: 'after' }], WIDE, T0 + 2_008),
      'already_terminal',
    );
    const late = await store().finish(
      fence,
      { status: 'completed', result: { content: [] }, resultDigest: 'd' },
      T0 + 2_007,
    );
    expect(late.outcome).toBe('late');
    const events = await allEvents(store(), fence.taskId, T0 + 2_009);
    expect(events.map((e) => [e.seq, e.kind, 'status' in e ? e.status : null])).toEqual([
      [1, 'status', 'working'],
      [2, 'progress', null],
      [3, 'input_requested', null],
      [4, 'status', 'input_required'],
      [5, 'status', 'cancelled'],
    ]);
    expect((await mustGet(store(), fence.taskId, T0 + 2_009)).eventSeq).toBe(5);
  });

  test('events: concurrent writes to one task get distinct, gap-free seqs in commit order', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const writes = Array.from({ length: 12 }, (_, i) =>
      i % 2 === 0
        ? store().progress(fence, { done: i }, T0 + 1)
        : store().appendLog(fence, [{ stream: 'log', text: `line ${i}` }], WIDE, T0 + 1),
    );
    await Promise.all(writes);
    const events = await allEvents(store(), fence.taskId);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    // Log events keep the order of the lines they name.
    const logSeqs = events.flatMap((e) => (e.kind === 'log' ? [e.logSeq] : []));
    expect(logSeqs).toEqual([...logSeqs].sort((x, y) => x - y));
  });

  test('events: a log event whose line the log bound dropped stays, without its line', async () => {
    const { fence } = await claimed(store(), await created(store()));
    const tight: LogBound = { maxLines: 2, maxBytes: 1_000_000 };
    await store().appendLog(
      fence,
      [1, 2, 3].map((n) => ({ stream: 'log' as const, text: `l${n}` })),
      tight,
      T0 + 1,
    );
    const events = await allEvents(store(), fence.taskId);
    expect(events.map((e) => (e.kind === 'log' ? [e.seq, e.logSeq, e.line?.text ?? null] : [e.seq]))).toEqual([
      [1],
      [2, 1, null],
      [3, 2, 'l2'],
      [4, 3, 'l3'],
    ]);
  });

  test('S8 events: another owner, an unknown id and an expired task read as null alike', async () => {
    const task = await created(store(), { ttlMs: 1_000 });
    const { fence } = await claimed(store(), task);
    await store().finish(fence, { status: 'completed', result: { content: [] }, resultDigest: 'd' }, T0 + 10);
    expect(await store().readEvents(STRANGER, task.id, { after: 0, limit: 10 }, T0 + 20)).toBeNull();
    expect(await store().readEvents(OWNER, 'no-such-task', { after: 0, limit: 10 }, T0 + 20)).toBeNull();
    expect(await store().readEvents(OWNER, task.id, { after: 0, limit: 10 }, T0 + 120_000)).toBeNull();
  });

  test('events: sweeping a task deletes its events (a task created again under its id starts at 1)', async () => {
    const task = await created(store(), { ttlMs: 1_000 });
    const { fence } = await claimed(store(), task);
    await store().progress(fence, { done: 1 }, T0 + 1);
    await store().finish(fence, { status: 'completed', result: { content: [] }, resultDigest: 'd' }, T0 + 2);
    expect(await store().sweepExpired(T0 + 120_000, 10)).toBe(1);
    const again = await created(store(), { id: task.id, now: T0 + 120_001 });
    expect(again.eventSeq).toBe(1);
    const events = await allEvents(store(), task.id, T0 + 120_002);
    expect(events.map((e) => [e.seq, e.kind])).toEqual([[1, 'status']]);
  });
}
