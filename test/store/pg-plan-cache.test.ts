import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { tablesOf } from '../../src/store/postgres/db.js';
import { openPostgresTaskStore } from '../../src/store/postgres/index.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, openStore, PG_URL } from './postgres-fixture.js';

// Every statement is prepared once per connection (`DbOptions.prepared`) so that PostgreSQL plans
// it once. Its plan cache keeps the generic plan only while that plan looks no dearer than one
// made for the call's own values: a statement it plans afresh on every call pays planning on the
// hot path. On a table of 100,000 tasks a batch of `get`s given as arrays (the plan guesses 10
// elements) was planned on every call below about 10 items, a lone `get` included; this counts
// the plans of each statement, and reads the plan each batch (the gets', the heartbeats') keeps.
const OPEN = 100_000;

interface Prepared {
  readonly name: string;
  readonly statement: string;
  readonly generic_plans: string;
  readonly custom_plans: string;
}

if (PG_URL === '') {
  describe('the plan cache keeps the hot reads generic', failWithoutDatabase);
} else {
  describe('the plan cache keeps the hot reads generic', () => {
    const admin = adminPool();
    const schema = freshSchema('plancache');
    afterAll(async () => {
      await dropSchema(admin, schema);
      await admin.end();
    });

    it('40 lone gets, 40 batches of 4 gets and 40 of 4 heartbeats on one connection: each statement planned at most 5 times', async () => {
      await (await openStore(schema)).close();
      const t = tablesOf(schema);
      await admin.query(
        `INSERT INTO ${t.tasks} (id, owner, tool, args, request_digest, wire, status, created_at, updated_at, poll_interval_ms)
         SELECT 't' || lpad(i::text, 6, '0'), 'o' || (i % 7), 'a', '{}', 'd', 'mcp-tasks-ext', 'working', i, i, 1000
         FROM generate_series(1, ${OPEN}) AS i`,
      );
      // Four of them run on node w at epoch 1, as if claimed: the heartbeats' fence holds for them.
      const leasedIds = ['t000021', 't000022', 't000023', 't000024'];
      await admin.query(
        `UPDATE ${t.tasks} SET lease_owner = 'w', epoch = 1, lease_expires_at = 1 WHERE id = ANY ($1)`,
        [leasedIds],
      );
      await admin.query(`ANALYZE ${t.tasks}`);

      const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
      const store = await openPostgresTaskStore({ pool, schema });
      try {
        for (let i = 1; i <= 40; i += 1) {
          const id = `t${String(i * 7).padStart(6, '0')}`;
          const task = await store.get('o0', id, Date.now());
          expect(task?.id).toBe(id);
        }
        for (let i = 1; i <= 40; i += 1) {
          // Four gets in one turn are one statement; a foreign owner and an unknown id answer null (S7).
          const ids = [
            `t${String(i * 7).padStart(6, '0')}`,
            `t${String(i * 7 + 1).padStart(6, '0')}`,
            'nope',
            't000014',
          ];
          const owners = ['o0', 'o1', 'o0', 'o1'];
          const tasks = await Promise.all(ids.map((id, k) => store.get(owners[k]!, id, Date.now())));
          expect(tasks.map((task) => task?.id ?? null)).toEqual([ids[0], ids[1], null, null]);
        }

        for (let i = 1; i <= 40; i += 1) {
          // Four heartbeats in one turn are one statement, each task its own answer.
          const beaten = await Promise.all(
            leasedIds.map((taskId) => store.heartbeat({ taskId, workerId: 'w', epoch: 1 }, 10_000, 1_000 * i)),
          );
          expect(beaten.map((task) => [task.id, task.leaseExpiresAt])).toEqual(
            leasedIds.map((id) => [id, 1_000 * i + 10_000]),
          );
        }

        const client = await pool.connect();
        let prepared: Prepared[];
        try {
          prepared = (
            await client.query<Prepared>(
              'SELECT name, statement, generic_plans, custom_plans FROM pg_prepared_statements',
            )
          ).rows;
          const hot = prepared.filter((p) => Number(p.generic_plans) + Number(p.custom_plans) >= 40);
          expect(hot).toHaveLength(3);
          for (const statement of hot) {
            expect(Number(statement.custom_plans), statement.statement).toBeLessThanOrEqual(5);
          }
          // The plan each batch keeps reaches each item through the primary key, never the whole table.
          const batches: [string, string][] = [
            ['SELECT', '[{"ord":0,"id":"t000007","owner":"o0","now":1}]'],
            ['UPDATE', '[{"ord":0,"id":"t000021","owner":"w","epoch":1,"expires":1}]'],
          ];
          for (const [kind, items] of batches) {
            const batch = hot.find((p) => p.statement.includes('jsonb_to_recordset') && p.statement.includes(kind));
            expect(batch, kind).toBeDefined();
            const plan = (
              await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${batch!.name}('${items}')`)
            ).rows
              .map((row) => row['QUERY PLAN'])
              .join('\n');
            expect(plan, kind).toMatch(/Nested Loop[\s\S]*Index Scan using tasks_pkey on tasks/);
            expect(plan, kind).not.toMatch(/Seq Scan on tasks|Hash Join/);
          }
        } finally {
          client.release();
        }
      } finally {
        await store.close();
        await pool.end();
      }
    }, 60_000);
  });
}
