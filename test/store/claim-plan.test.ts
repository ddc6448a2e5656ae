import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { CLAIM } from '../../src/store/postgres/claim.js';
import { tablesOf } from '../../src/store/postgres/db.js';
import { CLAIM_CANDIDATES } from '../../src/store/sqlite/claim.js';
import { migrate } from '../../src/store/sqlite/migrate.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, openStore, PG_URL } from './postgres-fixture.js';

// Issue 14 item 3: the claim's cost must not grow with the number of open tasks. A plan that scans
// `tasks` or sorts every candidate grows with the backlog; an ordered index read stops at `limit`.
// Figure 9 of `npm run bench` (bench/figures/claim.ts) measures the same claim at 1,000 and 100,000 open tasks.
const OPEN = 5_000;

describe('claim query plan: SQLite', () => {
  const db = new Database(':memory:');
  afterAll(() => db.close());
  migrate(db);
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${OPEN})
     INSERT INTO tasks (id, owner, tool, args, request_digest, wire, status, created_at, updated_at, poll_interval_ms)
     SELECT printf('t%06d', i), 'o', CASE WHEN i % 3 = 0 THEN 'b' ELSE 'a' END, '{}', 'd', 'mcp-tasks-ext',
            CASE WHEN i % 10 = 0 THEN 'completed' ELSE 'working' END, i, i, 1000 FROM n`,
  ).run();
  db.exec('ANALYZE');

  it('reads one tool in created_at order from tasks_claim_order: no SCAN tasks, no temp B-tree', () => {
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN ${CLAIM_CANDIDATES}`)
      .all({ tool: 'a', now: 0, limit: 16 })
      .map((row) => (row as { detail: string }).detail);
    expect(plan).toEqual([expect.stringMatching(/^SEARCH tasks USING INDEX tasks_claim_order \(tool=\?\)/)]);
    expect(plan.join('\n')).not.toMatch(/SCAN tasks|TEMP B-TREE/);
  });

  it('returns the oldest open unleased tasks of that tool', () => {
    db.prepare(`UPDATE tasks SET lease_owner = 'w', lease_expires_at = 100 WHERE id = 't000001'`).run();
    const rows = db.prepare(CLAIM_CANDIDATES).all({ tool: 'a', now: 50, limit: 3 }) as { id: string }[];
    // t000001 is leased until 100, t000003 is tool b.
    expect(rows.map((r) => r.id)).toEqual(['t000002', 't000004', 't000005']);
  });
});

if (PG_URL === '') {
  describe('claim query plan: PostgreSQL', failWithoutDatabase);
} else {
  describe('claim query plan: PostgreSQL', () => {
    const admin = adminPool();
    const schema = freshSchema('plan');
    afterAll(async () => {
      await dropSchema(admin, schema);
      await admin.end();
    });

    it('each tool is an ordered index scan of tasks_claim_order: no Seq Scan on tasks, no Sort of tasks', async () => {
      const store = await openStore(schema);
      await store.close();
      const t = tablesOf(schema);
      await admin.query(
        `INSERT INTO ${t.tasks} (id, owner, tool, args, request_digest, wire, status, terminal_at, created_at, updated_at, poll_interval_ms)
         SELECT 't' || lpad(i::text, 6, '0'), 'o', CASE WHEN i % 3 = 0 THEN 'b' ELSE 'a' END, '{}', 'd', 'mcp-tasks-ext',
                CASE WHEN i % 10 = 0 THEN 'completed' ELSE 'working' END, CASE WHEN i % 10 = 0 THEN i END, i, i, 1000
         FROM generate_series(1, ${OPEN}) AS i`,
      );
      await admin.query(`ANALYZE ${t.tasks}`);
      const client = await admin.connect();
      try {
        const explained = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${CLAIM(t)}`, [
          'w',
          1_000,
          0,
          16,
          ['a', 'b'],
        ]);
        const plan = explained.rows.map((row) => row['QUERY PLAN']).join('\n');
        expect(plan).toMatch(/Function Scan on unnest/);
        expect(plan).toMatch(/LockRows[\s\S]*Index Scan using tasks_claim_order on tasks/);
        expect(plan).not.toMatch(/Seq Scan on tasks|Bitmap Heap Scan on tasks/);
        // The one Sort merges the per-tool lists (at most tools x limit rows), above the index scans.
        const lines = plan.split('\n');
        const sorts = lines.filter((line) => /->\s+Sort\b/.test(line));
        expect(sorts.length).toBeLessThanOrEqual(1);
        const indexScan = lines.findIndex((line) => line.includes('Index Scan using tasks_claim_order'));
        const sort = lines.findIndex((line) => /->\s+Sort\b/.test(line));
        expect(sort === -1 || sort < indexScan).toBe(true);
      } finally {
        client.release();
      }
    });
  });
}
