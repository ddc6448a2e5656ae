/**
 * Issue 31: one round trip per client-visible operation on PostgreSQL, and group commit. Counts
 * the statements the store sends to the server (every `query` of every pooled connection), so a
 * create or a finish that grows a BEGIN, a read-then-write or a second statement fails here,
 * whatever the machine's speed. S1 and S3 stay with the conformance suite (postgres.test.ts).
 */
import pg from 'pg';
import { z } from 'zod';
import { createEngine } from '../../src/runner/engine.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newTask, OWNER, rejectsWith, T0 } from '../../src/testing/fixtures.js';
import type { Fence, TaskStore } from '../../src/store/port.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, openStore, PG_URL } from './postgres-fixture.js';

const RESULT = { content: [{ type: 'text', text: 'done' }] };

if (PG_URL === '') {
  describe('PostgreSQL: round trips per operation', failWithoutDatabase);
} else {
  const admin = adminPool();
  afterAll(() => admin.end());

  describe('PostgreSQL: round trips per operation', () => {
    let schema = '';
    let pool: pg.Pool;
    let store: TaskStore;
    let sent: string[] = [];

    beforeEach(async () => {
      schema = freshSchema('trips');
      pool = new pg.Pool({ connectionString: PG_URL, max: 8 });
      pool.on('connect', (client) => {
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
          const first = args[0] as string | { text?: string };
          sent.push(typeof first === 'string' ? first : (first.text ?? ''));
          return query(...args);
        };
      });
      store = await openStore(schema, { pool });
    });
    afterEach(async () => {
      await store.close();
      await pool.end();
      await dropSchema(admin, schema);
    });

    /** The statements `work` sent. */
    async function statements<T>(work: () => Promise<T>): Promise<{ value: T; count: number }> {
      sent = [];
      const value = await work();
      return { value, count: sent.length };
    }

    async function leased(workerId = 'w1'): Promise<Fence> {
      const { task } = await store.create(newTask({ lease: { workerId, leaseMs: 30_000 } }));
      return { taskId: task.id, workerId, epoch: task.epoch };
    }

    it('a create is one statement: with no key, with a new key, with a key already used (S1, S5)', async () => {
      expect((await statements(() => store.create(newTask()))).count).toBe(1);
      const keyed = newTask({ submissionKey: 'k-1' });
      const first = await statements(() => store.create(keyed));
      expect(first.count).toBe(1);
      expect(first.value.created).toBe(true);
      const again = await statements(() => store.create({ ...keyed, id: 'other-id' }));
      expect(again.count).toBe(1);
      expect(again.value).toMatchObject({ created: false, task: { id: keyed.id } });
      expect((await statements(() => store.create(newTask({ lease: { workerId: 'w', leaseMs: 1000 } })))).count).toBe(
        1,
      );
    });

    it("an engine's submit is one statement, the per-caller cap on live tasks counted in it (T-79)", async () => {
      const tool = defineTaskTool({
        name: 'report',
        description: 'x',
        inputSchema: z.object({}),
        handler: async () => ({ content: [] }),
      });
      const engine = createEngine({ store, tools: [tool], maxLiveTasksPerOwner: 3 });
      const submit = () => engine.submit({ owner: OWNER, tool: 'report', args: {}, wire: 'mcp-tasks-ext' });
      for (let i = 0; i < 3; i += 1) expect((await statements(submit)).count).toBe(1);
      const refused = await statements(() => rejectsWith(submit(), 'resource_exhausted'));
      expect(refused.count).toBe(1);
    });

    it('the per-task event bound adds no statement: a progress past it costs what one under it does, the finish stays one', async () => {
      const bounded = await openStore(schema, { pool, eventBound: { maxKept: 3 } });
      try {
        const { task } = await bounded.create(newTask({ lease: { workerId: 'w1', leaseMs: 30_000 } }));
        const fence = { taskId: task.id, workerId: 'w1', epoch: task.epoch };
        const under = await statements(() => bounded.progress(fence, { done: 1 }, T0 + 1));
        for (let i = 2; i <= 5; i++) await bounded.progress(fence, { done: i }, T0 + i);
        const past = await statements(() => bounded.progress(fence, { done: 6 }, T0 + 6));
        expect(past.count).toBe(under.count);
        const done = await statements(() =>
          bounded.finish(fence, { status: 'completed', result: RESULT, resultDigest: 'd' }, T0 + 7),
        );
        expect(done.count).toBe(1);
        const read = await bounded.readEvents(OWNER, task.id, { after: 0, limit: 100 }, T0 + 8);
        expect(read?.events.map((e) => e.seq)).toEqual([1, 5, 6, 7, 8]);
      } finally {
        await bounded.close();
      }
    });

    it('a finish is one statement, recorded or late after a cancel (S2, S4)', async () => {
      const fence = await leased();
      const done = await statements(() =>
        store.finish(fence, { status: 'completed', result: RESULT, resultDigest: 'd' }, T0 + 1),
      );
      expect(done.count).toBe(1);
      expect(done.value.outcome).toBe('recorded');

      const cancelled = await leased();
      await store.cancel(OWNER, cancelled.taskId, T0 + 1);
      const late = await statements(() =>
        store.finish(cancelled, { status: 'completed', result: RESULT, resultDigest: 'd' }, T0 + 2),
      );
      expect(late.count).toBe(1);
      expect(late.value).toMatchObject({ outcome: 'late', task: { status: 'cancelled' } });

      const lost = await statements(() =>
        rejectsWith(
          store.finish({ ...fence, epoch: 9 }, { status: 'failed', error: { code: 1, message: 'x' } }, T0),
          'lease_lost',
        ),
      );
      expect(lost.count).toBe(1);
    });

    it('a create and a finish with webhooks are one statement each, their events and outbox rows in it (S1, S2)', async () => {
      const webhooks = [
        { url: 'http://127.0.0.1:9/all', secret: 'whsec_a', events: 'all', source: 'call' },
        { url: 'http://127.0.0.1:9/end', secret: 'whsec_b', events: 'terminal', source: 'server' },
      ] as const;
      const made = await statements(() =>
        store.create(newTask({ webhooks, lease: { workerId: 'w1', leaseMs: 30_000 } })),
      );
      expect(made.count).toBe(1);
      expect(made.value.task.eventSeq).toBe(1);
      const fence = { taskId: made.value.task.id, workerId: 'w1', epoch: made.value.task.epoch };
      const done = await statements(() =>
        store.finish(fence, { status: 'completed', result: RESULT, resultDigest: 'd' }, T0 + 1),
      );
      expect(done.count).toBe(1);
      expect(done.value.task.eventSeq).toBe(2);
      const read = await store.readEvents(OWNER, fence.taskId, { after: 0, limit: 100 }, T0 + 2);
      expect(read?.events.map((e) => [e.seq, e.kind, 'status' in e ? e.status : null])).toEqual([
        [1, 'status', 'working'],
        [2, 'status', 'completed'],
      ]);
      const deliveries = await store.webhooks!.readDeliveries(OWNER, fence.taskId);
      expect(deliveries.map((d) => [d.seq, d.url, d.status]).sort()).toEqual([
        [1, 'http://127.0.0.1:9/all', 'working'],
        [2, 'http://127.0.0.1:9/all', 'completed'],
        [2, 'http://127.0.0.1:9/end', 'completed'],
      ]);
    });

    it('the creates and the finishes of one turn are one statement each, every task with its own events', async () => {
      const creates = await statements(() =>
        Promise.all(
          [1, 2, 3].map((i) => store.create(newTask({ id: `t-${i}`, lease: { workerId: 'w1', leaseMs: 30_000 } }))),
        ),
      );
      expect(creates.count).toBe(1);
      expect(creates.value.map((c) => c.task.eventSeq)).toEqual([1, 1, 1]);
      const finishes = await statements(() =>
        Promise.all(
          creates.value.map(({ task }) =>
            store.finish(
              { taskId: task.id, workerId: 'w1', epoch: task.epoch },
              { status: 'completed', result: RESULT, resultDigest: 'd' },
              T0 + 1,
            ),
          ),
        ),
      );
      expect(finishes.count).toBe(1);
      for (const { task } of creates.value) {
        const read = await store.readEvents(OWNER, task.id, { after: 0, limit: 100 }, T0 + 2);
        expect(read?.lastSeq).toBe(2);
        expect(read?.events.map((e) => e.seq)).toEqual([1, 2]);
      }
    });

    it('a get is one statement; the gets of one turn are one statement, each with its own owner and now (S7, S8)', async () => {
      const { task } = await store.create(newTask());
      expect((await statements(() => store.get(OWNER, task.id, T0))).count).toBe(1);
      const finished = await leased();
      await store.finish(finished, { status: 'completed', result: RESULT, resultDigest: 'd' }, T0 + 1);
      const reads = await statements(() =>
        Promise.all([
          ...Array.from({ length: 13 }, () => store.get(OWNER, task.id, T0)),
          store.get('someone-else', task.id, T0),
          store.get(OWNER, 'no-such-task', T0),
          store.get(OWNER, finished.taskId, T0 + 10 * 86_400_000),
        ]),
      );
      expect(reads.count).toBe(1);
      expect(reads.value.slice(0, 13).every((t) => t?.id === task.id)).toBe(true);
      expect(reads.value.slice(13)).toEqual([null, null, null]);
    });

    it('group commit: 16 creates of one turn are one statement, and 16 finishes of one turn are one', async () => {
      const creates = await statements(() =>
        Promise.all(
          Array.from({ length: 16 }, () => store.create(newTask({ lease: { workerId: 'w', leaseMs: 30_000 } }))),
        ),
      );
      expect(creates.count).toBe(1);
      expect(creates.value.every((c) => c.created && c.task.epoch === 1)).toBe(true);
      const finishes = await statements(() =>
        Promise.all(
          creates.value.map(({ task }) =>
            store.finish(
              { taskId: task.id, workerId: 'w', epoch: 1 },
              { status: 'completed', result: RESULT, resultDigest: 'd' },
              T0 + 5,
            ),
          ),
        ),
      );
      expect(finishes.count).toBe(1);
      expect(finishes.value.every((f) => f.outcome === 'recorded' && f.task.status === 'completed')).toBe(true);
    });

    it('the heartbeats of one turn are one statement; a fence that no longer holds is lease_lost alone (S3)', async () => {
      const fences = await Promise.all(Array.from({ length: 16 }, () => leased('w')));
      const cancelled = fences[3]!;
      await store.cancel(OWNER, cancelled.taskId, T0 + 1);
      const stale = { ...fences[5]!, epoch: 7 };
      const foreign = { ...fences[6]!, workerId: 'another-node' };
      const beats = await statements(() =>
        Promise.all(
          [...fences.filter((_f, i) => i !== 5 && i !== 6), stale, foreign].map((fence) =>
            store.heartbeat(fence, 60_000, T0 + 10).then(
              (task) => ({ fence, task, error: undefined }),
              (error: unknown) => ({ fence, task: undefined, error }),
            ),
          ),
        ),
      );
      expect(beats.count).toBe(1);
      for (const beat of beats.value) {
        if (beat.fence === stale || beat.fence === foreign) {
          expect((beat.error as { code?: string }).code, beat.fence.taskId).toBe('lease_lost');
          continue;
        }
        expect(beat.error).toBeUndefined();
        // Each answer is its own task, its lease extended; a cancelled task still beats (S4).
        expect(beat.task).toMatchObject({ id: beat.fence.taskId, leaseExpiresAt: T0 + 10 + 60_000 });
        expect(beat.task?.status).toBe(beat.fence === cancelled ? 'cancelled' : 'working');
      }
      // The stale and the foreign fence left their tasks' leases as they were.
      for (const fence of [stale, foreign]) {
        expect((await store.get(OWNER, fence.taskId, T0 + 11))?.leaseExpiresAt).toBe(T0 + 30_000);
      }
    });

    it('a task beating twice in one turn (an UPDATE joins its row once) is answered for each beat', async () => {
      const [a, b] = await Promise.all([leased('w'), leased('w')]);
      const beats = await statements(() =>
        Promise.all([
          store.heartbeat(a, 60_000, T0 + 10),
          store.heartbeat(a, 60_000, T0 + 11),
          store.heartbeat(b, 60_000, T0 + 10),
        ]),
      );
      expect(beats.value.map((task) => [task.id, task.leaseExpiresAt])).toEqual([
        [a.taskId, T0 + 10 + 60_000],
        [a.taskId, T0 + 11 + 60_000],
        [b.taskId, T0 + 10 + 60_000],
      ]);
      expect(beats.count).toBe(3); // such a turn goes one beat at a time
    });

    it('a create the server refuses fails alone; the rest of its batch is created', async () => {
      const good = Array.from({ length: 3 }, () => newTask());
      const bad = newTask({ args: { text: 'nul \u0000 here' } });
      const creates = [...good, bad].map((input) => store.create(input));
      await rejectsWith(creates[3] as Promise<unknown>, 'invalid_argument');
      const outcomes = await Promise.allSettled(creates.slice(0, 3));
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      for (const input of good) expect(await store.get(OWNER, input.id, T0)).not.toBeNull();
      expect(await store.get(OWNER, bad.id, T0)).toBeNull();
    });

    it('S5: two creates with one key in one batch make one task', async () => {
      const a = newTask({ submissionKey: 'same', args: { n: 1 } });
      const b = { ...a, id: `${a.id}-b` };
      const [first, second] = await Promise.all([store.create(a), store.create(b)]);
      expect(first.task.id).toBe(second.task.id);
      expect([first.created, second.created].sort()).toEqual([false, true]);
      const c = newTask({ submissionKey: 'same', args: { n: 2 } });
      await rejectsWith(store.create(c), 'submission_key_conflict');
    });
  });
}
