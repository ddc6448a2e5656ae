import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestDigest } from '../../src/core/digest.js';
import { isTerminusError } from '../../src/core/errors.js';
import { expiresAt } from '../../src/core/task.js';
import type { NewTask, TaskStore } from '../../src/store/port.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, openStore, PG_URL } from './postgres-fixture.js';

// Several server nodes share one database: here each "node" is a store with its own pool.

const T0 = 1_800_000_000_000;
const TOOL = 'report';

function input(id: string, overrides: Partial<NewTask> = {}): NewTask {
  const args = overrides.args ?? { id };
  return {
    id,
    owner: 'alice',
    tool: TOOL,
    args,
    requestDigest: requestDigest(TOOL, args),
    submissionKey: null,
    wire: 'mcp-tasks-ext',
    ttlMs: 60_000,
    keepAliveMs: null,
    pollIntervalMs: 1000,
    now: T0,
    ...overrides,
  };
}

if (PG_URL === '') {
  describe('PostgreSQL: several nodes on one database', failWithoutDatabase);
} else {
  const admin = adminPool();
  afterAll(() => admin.end());

  describe('PostgreSQL: several nodes on one database', () => {
    let schema = '';
    let nodes: TaskStore[] = [];
    beforeEach(async () => {
      schema = freshSchema('nodes');
      nodes = await Promise.all([openStore(schema), openStore(schema), openStore(schema)]);
    });
    afterEach(async () => {
      await Promise.all(nodes.map((n) => n.close()));
      await dropSchema(admin, schema);
    });
    const node = (i: number): TaskStore => nodes[i % nodes.length] as TaskStore;

    it('webhooks: three nodes claiming the outbox at once never hold one row twice; every row is taken once', async () => {
      const webhooks = [
        {
          url: 'https://hooks.example/a',
          secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          events: 'terminal',
          source: 'server',
        },
      ] as const;
      const ids = Array.from({ length: 30 }, (_, i) => `hooked-${i}`);
      for (const id of ids) await node(0).create(input(id, { webhooks }));
      for (const id of ids) await node(1).cancel('alice', id, T0 + 1);
      const claims = await Promise.all(
        [0, 1, 2, 0, 1, 2].map((i) =>
          node(i).webhooks!.claimDeliveries({ node: `n${i}`, now: T0 + 2, leaseMs: 60_000, limit: 8 }),
        ),
      );
      const taken = claims.flat().map((d) => d.taskId);
      expect(new Set(taken).size).toBe(taken.length);
      const rest = await node(2).webhooks!.claimDeliveries({ node: 'n9', now: T0 + 3, leaseMs: 60_000, limit: 100 });
      expect([...taken, ...rest.map((d) => d.taskId)].sort()).toEqual([...ids].sort());
    });

    it('migrations: nodes starting together apply each migration once; a reopen applies nothing', async () => {
      const fresh = freshSchema('migrate');
      try {
        const stores = await Promise.all(Array.from({ length: 6 }, () => openStore(fresh)));
        await Promise.all(stores.map((s) => s.close()));
        const rows = await admin.query(`SELECT component, id FROM "${fresh}".schema_migrations ORDER BY id`);
        expect(rows.rows).toEqual([
          { component: 'tasks', id: 1 },
          { component: 'tasks', id: 2 },
          { component: 'tasks', id: 3 },
          { component: 'tasks', id: 4 },
          { component: 'tasks', id: 5 },
          { component: 'tasks', id: 6 },
        ]);
        await (await openStore(fresh)).close();
        expect((await admin.query(`SELECT count(*)::int AS n FROM "${fresh}".schema_migrations`)).rows).toEqual([
          { n: 6 },
        ]);
      } finally {
        await dropSchema(admin, fresh);
      }
    });

    it('S5: the same submission key sent to two nodes at the same instant creates one task, 200 times', async () => {
      for (let race = 0; race < 200; race += 1) {
        const key = `key-${race}`;
        const [a, b] = await Promise.all([
          node(0).create(input(`a-${race}`, { submissionKey: key, args: { race } })),
          node(1).create(input(`b-${race}`, { submissionKey: key, args: { race } })),
        ]);
        expect([a.created, b.created].filter(Boolean)).toHaveLength(1);
        expect(a.task.id).toBe(b.task.id);
      }
      const count = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".tasks`);
      expect(count.rows).toEqual([{ n: 200 }]);
    });

    it('S6: create racing lookupKey on another node: either the task is found, or it is never created', async () => {
      let found = 0;
      let burned = 0;
      for (let race = 0; race < 100; race += 1) {
        const key = `race-${race}`;
        const [created, lookup] = await Promise.allSettled([
          node(0).create(input(`c-${race}`, { submissionKey: key, args: { race } })),
          node(1).lookupKey('alice', key, T0),
        ]);
        if (lookup.status !== 'fulfilled') throw lookup.reason;
        if (lookup.value.kind === 'found') {
          found += 1;
          expect(created.status === 'fulfilled' && created.value.created).toBe(true);
          expect(lookup.value.task.id).toBe(`c-${race}`);
        } else {
          burned += 1;
          expect(created.status).toBe('rejected');
          expect(isTerminusError(created.status === 'rejected' ? created.reason : null, 'submission_key_burned')).toBe(
            true,
          );
          expect(await node(2).get('alice', `c-${race}`, T0)).toBeNull();
        }
      }
      expect(found + burned).toBe(100);
    });

    it('S3: claims from many pool clients on three nodes never return the same task twice', async () => {
      const total = 300;
      for (let i = 0; i < total; i += 1) await node(i).create(input(`claim-${i.toString().padStart(4, '0')}`));
      const seen = new Map<string, string>();
      const worker = async (w: number): Promise<void> => {
        for (;;) {
          const batch = await node(w).claim({
            workerId: `w${w}`,
            now: T0 + 1,
            leaseMs: 60_000,
            limit: 4,
            tools: [TOOL],
          });
          if (batch.length === 0) return;
          for (const task of batch) {
            expect(seen.has(task.id), `${task.id} claimed by ${seen.get(task.id)} and w${w}`).toBe(false);
            seen.set(task.id, `w${w}`);
            expect(task.epoch).toBe(1);
            expect(task.leaseOwner).toBe(`w${w}`);
          }
        }
      };
      // 24 claimers: 8 per node, each node's pool has 8 connections, so claims really overlap.
      await Promise.all(Array.from({ length: 24 }, (_, w) => worker(w)));
      expect(seen.size).toBe(total);
      const perWorker = new Set(seen.values());
      expect(perWorker.size).toBeGreaterThan(1);
    });

    it('S4: cancel on one node racing finish on another: exactly one wins, the other is late or already_terminal', async () => {
      for (let race = 0; race < 100; race += 1) {
        const task = (await node(0).create(input(`cf-${race}`))).task;
        const [claim] = await node(1).claim({ workerId: 'w', now: T0, leaseMs: 60_000, limit: 1, tools: [TOOL] });
        expect(claim?.id).toBe(task.id);
        const fence = { taskId: task.id, workerId: 'w', epoch: claim?.epoch ?? -1 };
        const result = { content: [{ type: 'text', text: `done ${race}` }] };
        const [cancel, finish] = await Promise.all([
          node(2).cancel('alice', task.id, T0 + 5),
          node(1).finish(fence, { status: 'completed', result, resultDigest: `d${race}` }, T0 + 5),
        ]);
        const stored = await node(0).get('alice', task.id, T0 + 6);
        if (cancel.outcome === 'cancelled') {
          expect(finish.outcome).toBe('late');
          expect(stored?.status).toBe('cancelled');
          expect(stored?.result).toBeNull();
          expect(stored?.lateOutcome).toEqual({ epoch: fence.epoch, at: T0 + 5, result });
        } else {
          expect(finish.outcome).toBe('recorded');
          expect(cancel.task.status).toBe('completed');
          expect(stored?.status).toBe('completed');
          expect(stored?.result).toEqual(result);
          expect(stored?.lateOutcome).toBeNull();
        }
      }
    });

    it('S3: a node whose lease expired is fenced out after another node re-claims the task', async () => {
      const task = (await node(0).create(input('zombie'))).task;
      const [first] = await node(0).claim({ workerId: 'node-a', now: T0, leaseMs: 1000, limit: 1, tools: [TOOL] });
      await node(0).checkpoint({ taskId: task.id, workerId: 'node-a', epoch: 1 }, { step: 3 }, T0 + 10);
      const [second] = await node(1).claim({
        workerId: 'node-b',
        now: T0 + 1000,
        leaseMs: 1000,
        limit: 1,
        tools: [TOOL],
      });
      expect([first?.epoch, second?.epoch]).toEqual([1, 2]);
      expect(second?.checkpoint).toEqual({ step: 3 });
      const stale = { taskId: task.id, workerId: 'node-a', epoch: 1 };
      const writes = [
        () => node(0).heartbeat(stale, 1000, T0 + 1001),
        () => node(0).progress(stale, { done: 1 }, T0 + 1001),
        () => node(0).checkpoint(stale, { step: 99 }, T0 + 1001),
        () => node(0).requestInput(stale, 'k', { method: 'elicitation/create', params: {} }, T0 + 1001),
        () => node(0).finish(stale, { status: 'completed', result: {}, resultDigest: 'x' }, T0 + 1001),
        () => node(0).release(stale, T0 + 1001),
      ];
      for (const write of writes) await expect(write()).rejects.toMatchObject({ code: 'lease_lost' });
      const stored = await node(2).get('alice', task.id, T0 + 1002);
      expect(stored).toMatchObject({ status: 'working', leaseOwner: 'node-b', epoch: 2, checkpoint: { step: 3 } });
    });

    it('S7: the expires_at column PostgreSQL computes equals core expiresAt()', async () => {
      const cases: Partial<NewTask>[] = [
        { ttlMs: 60_000, keepAliveMs: null },
        { ttlMs: 1000, keepAliveMs: null },
        { ttlMs: null, keepAliveMs: null },
        { ttlMs: null, keepAliveMs: 5000 },
        { ttlMs: 60_000, keepAliveMs: 5000 },
      ];
      for (const [i, overrides] of cases.entries()) {
        for (const finishAt of [T0 + 10, T0 + 120_000]) {
          const id = `exp-${i}-${finishAt}`;
          await node(0).create(input(id, overrides));
          const [claim] = await node(0).claim({ workerId: 'w', now: T0, leaseMs: 600_000, limit: 1, tools: [TOOL] });
          const done = await node(0).finish(
            { taskId: id, workerId: 'w', epoch: claim?.epoch ?? -1 },
            { status: 'completed', result: {}, resultDigest: 'd' },
            finishAt,
          );
          const row = await admin.query<{ expires_at: string | null }>(
            `SELECT expires_at FROM "${schema}".tasks WHERE id = $1`,
            [id],
          );
          const stored = row.rows[0]?.expires_at ?? null;
          expect(stored === null ? null : Number(stored), id).toBe(expiresAt(done.task));
        }
      }
    });

    it('a closed store rejects with unavailable', async () => {
      const store = await openStore(schema);
      await store.close();
      await expect(store.get('alice', 'x', T0)).rejects.toMatchObject({ code: 'unavailable' });
    });
  });
}
