import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeEventCursor } from '../../src/core/event-cursor.js';
import type { LogBound } from '../../src/core/log.js';
import type { EventBound, OrderedEvent } from '../../src/core/task-events.js';
import type { Clock } from '../../src/core/ports.js';
import { readTaskEvents } from '../../src/runner/read-events.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { claimed, created, OWNER, T0 } from '../../src/testing/fixtures.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, openStore, PG_URL } from './postgres-fixture.js';

/**
 * The per-task bound on events (issue 32): past `maxKept` progress and log events a task keeps its
 * newest, every status and input event stays, and a reader with a cursor still meets each seq
 * exactly once, as an event or counted in `skipped`. The same on every backend.
 */
const BOUND = 10;
const WIDE: LogBound = { maxLines: 10_000, maxBytes: 10_000_000 };
const ASK = { method: 'elicitation/create', params: { message: 'Proceed?' } };
const clock: Pick<Clock, 'now'> = { now: () => T0 + 10_000 };

type Open = (bound: EventBound, onDropped: (n: number) => void) => Promise<TaskStore>;

function boundCases(name: string, open: Open): void {
  describe(`per-task event bound: ${name}`, () => {
    /**
     * 100 progress reports (10x the bound), an input round in the middle, a log append of 25 lines
     * in one write (more than the bound at once), then the terminal write. `mid` runs after the
     * first 40 reports, so a reader can stand there.
     */
    async function flood(store: TaskStore, mid?: (id: string) => Promise<void>): Promise<string> {
      const { fence } = await claimed(store, await created(store));
      for (let i = 1; i <= 100; i++) {
        await store.progress(fence, { done: i, total: 100 }, T0 + i);
        if (i === 40) await mid?.(fence.taskId);
        if (i === 50) {
          await store.requestInput(fence, 'confirm', ASK, T0 + i);
          await store.respond(OWNER, fence.taskId, { confirm: { action: 'accept' } }, T0 + i);
        }
      }
      const lines = Array.from({ length: 25 }, (_, i) => ({ stream: 'log' as const, text: `line ${i + 1}` }));
      await store.appendLog(fence, lines, WIDE, T0 + 200);
      await store.finish(fence, { status: 'completed', result: { content: [] }, resultDigest: 'd' }, T0 + 300);
      return fence.taskId;
    }

    /** Reads every page from `cursor` with `limit`: the events and the skipped counts, checked as it goes. */
    async function readAll(store: TaskStore, id: string, limit: number, cursor?: string) {
      const events: OrderedEvent[] = [];
      let skipped = 0;
      let at = cursor === undefined ? 0 : Number(cursor.split('.')[0]);
      for (let pages = 0; pages < 500; pages++) {
        const page = await readTaskEvents({ store, clock }, OWNER, id, {
          ...(cursor === undefined ? {} : { cursor }),
          limit,
        });
        for (const event of page.events) expect(event.seq).toBeGreaterThan(at);
        // Every seq the cursor passed is an event of the page or counted as skipped.
        expect(page.next - at).toBe(page.events.length + page.skipped);
        events.push(...page.events);
        skipped += page.skipped;
        at = page.next;
        cursor = page.cursor;
        if (page.done) return { events, skipped, lastSeq: page.lastSeq };
      }
      throw new Error('the reader never reached done');
    }

    const kinds = (events: readonly OrderedEvent[]) => events.map((e) => (e.kind === 'status' ? e.status : e.kind));

    it('keeps at most the bound of progress and log rows plus every status and input event, the terminal last', async () => {
      let dropped = 0;
      const store = await open({ maxKept: BOUND }, (n) => (dropped += n));
      try {
        const id = await flood(store);
        const rows = await store.readEvents(OWNER, id, { after: 0, limit: 1000 }, T0 + 400);
        const events = rows?.events ?? [];
        // 1 working + 100 progress + input_requested + input_required + input_answered + working + 25 log + completed.
        expect(rows?.lastSeq).toBe(131);
        expect(events.filter((e) => e.kind === 'progress' || e.kind === 'log')).toHaveLength(BOUND);
        expect(events.filter((e) => e.kind === 'progress')).toHaveLength(0);
        expect(kinds(events.filter((e) => e.kind !== 'log'))).toEqual([
          'working',
          'input_requested',
          'input_required',
          'input_answered',
          'working',
          'completed',
        ]);
        // The newest log lines are the ones kept, with their text; the terminal event is last.
        expect(events.filter((e) => e.kind === 'log').map((e) => (e.kind === 'log' ? e.line?.text : null))).toEqual(
          Array.from({ length: BOUND }, (_, i) => `line ${25 - BOUND + i + 1}`),
        );
        expect(events.at(-1)).toMatchObject({ seq: 131, kind: 'status', status: 'completed' });
        expect(dropped).toBe(125 - BOUND);
      } finally {
        await store.close();
      }
    });

    it('a reader from cursor 0 sees every status event once and the skipped count; one resuming mid-way too', async () => {
      const store = await open({ maxKept: BOUND }, () => undefined);
      try {
        let midCursor: string | undefined;
        let before: OrderedEvent[] = [];
        let beforeSkipped = 0;
        const taskId = await flood(store, async (id) => {
          // Stop reading part of the way, while the task still reports.
          const page = await readTaskEvents({ store, clock }, OWNER, id, { limit: 3 });
          before = [...page.events];
          beforeSkipped = page.skipped;
          midCursor = page.cursor;
        });
        const resumed = await readAll(store, taskId, 4, midCursor);
        const seen = [...before, ...resumed.events];
        const seqs = seen.map((e) => e.seq);
        expect(new Set(seqs).size).toBe(seqs.length);
        expect(seen.length + beforeSkipped + resumed.skipped).toBe(resumed.lastSeq);
        expect(kinds(seen.filter((e) => e.kind === 'status'))).toEqual([
          'working',
          'input_required',
          'working',
          'completed',
        ]);
        expect(seen.at(-1)).toMatchObject({ kind: 'status', status: 'completed', seq: resumed.lastSeq });

        for (const limit of [1, 7, 1000]) {
          const whole = await readAll(store, taskId, limit);
          expect(kinds(whole.events.filter((e) => e.kind === 'status'))).toEqual([
            'working',
            'input_required',
            'working',
            'completed',
          ]);
          expect(whole.events.length + whole.skipped).toBe(131);
          expect(whole.skipped).toBe(125 - BOUND);
          expect(whole.events.at(-1)).toMatchObject({ kind: 'status', status: 'completed', seq: 131 });
        }
        // A cursor that stands in a dropped stretch reads on from there.
        const inGap = await readTaskEvents({ store, clock }, OWNER, taskId, { cursor: encodeEventCursor(taskId, 20) });
        expect(inGap.events[0]).toMatchObject({ kind: 'input_requested' });
        expect(inGap.next - 20).toBe(inGap.events.length + inGap.skipped);
      } finally {
        await store.close();
      }
    });
  });
}

boundCases('memory', async (bound, onEventsDropped) => createMemoryTaskStore({ eventBound: bound, onEventsDropped }));
boundCases('sqlite', async (bound, onEventsDropped) =>
  openSqliteTaskStore({ path: ':memory:', eventBound: bound, onEventsDropped }),
);
if (PG_URL === '') {
  describe('per-task event bound: postgres', failWithoutDatabase);
} else {
  const admin = adminPool();
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(admin, schema);
    await admin.end();
  });
  boundCases('postgres', async (bound, onEventsDropped) => {
    const schema = freshSchema('bound');
    schemas.push(schema);
    return openStore(schema, { eventBound: bound, onEventsDropped });
  });
}

describe('per-task event bound: migration 006 on SQLite', () => {
  it('counts the progress and log rows a task already has, so the first bounded write trims them', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'terminus-bound-')), 'tasks.db');
    const before = await openSqliteTaskStore({ path });
    const { fence } = await claimed(before, await created(before));
    for (let i = 1; i <= 15; i++) await before.progress(fence, { done: i }, T0 + i);
    await before.close();
    // The database as it was before 006: no counter, the migration not recorded.
    const raw = new Database(path);
    raw.exec(`ALTER TABLE tasks DROP COLUMN event_kept; DELETE FROM schema_migrations WHERE id = 6`);
    raw.close();
    const after = await openSqliteTaskStore({ path, eventBound: { maxKept: BOUND } });
    try {
      await after.progress(fence, { done: 16 }, T0 + 16);
      const read = await after.readEvents(OWNER, fence.taskId, { after: 0, limit: 1000 }, T0 + 20);
      expect(read?.events.filter((e) => e.kind === 'progress').map((e) => e.seq)).toEqual(
        Array.from({ length: BOUND }, (_, i) => 17 - BOUND + i + 1),
      );
      expect(read?.events[0]).toMatchObject({ seq: 1, kind: 'status', status: 'working' });
    } finally {
      await after.close();
    }
  });
});

describe('per-task event bound: options', () => {
  it('a bound below 1 is refused at open', async () => {
    expect(() => createMemoryTaskStore({ eventBound: { maxKept: 0 } })).toThrow(/maxKept must be an integer of 1/);
    await expect(openSqliteTaskStore({ path: ':memory:', eventBound: { maxKept: 1.5 } })).rejects.toThrow(
      /maxKept must be an integer of 1/,
    );
  });
});
