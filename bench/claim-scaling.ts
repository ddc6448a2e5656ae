/**
 * `npx tsx bench/claim-scaling.ts [--pg <url>]`: the runner's claim (limit 16, one tool among two)
 * at 1,000 and at 100,000 open tasks, on SQLite (and PostgreSQL with `--pg`), for the claim of
 * migration 002 and, for contrast, the claim of 001. Each claim runs inside a transaction that is
 * rolled back, so every sample sees the same table; the figure is the median of 200. Printed: the
 * ratio 100,000 / 1,000 (issue 14's target: within 2x) and the load average, because absolute
 * times on a shared machine mean little.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { CLAIM } from '../src/store/postgres/claim.js';
import { tablesOf } from '../src/store/postgres/db.js';
import { openPostgresTaskStore } from '../src/store/postgres/index.js';
import { claimTasks } from '../src/store/sqlite/claim.js';
import { migrate } from '../src/store/sqlite/migrate.js';

const SIZES = [1_000, 100_000] as const;
const SAMPLES = 200;
const REQUEST = { workerId: 'bench', now: 0, leaseMs: 10_000, limit: 16, tools: ['a'] } as const;

/** 001's claim: `SCAN`/temp B-tree over every open task (kept here only to show the difference). */
const SQLITE_001 = `
UPDATE tasks SET lease_owner = 'bench', lease_expires_at = 10000, epoch = epoch + 1
WHERE id IN (SELECT id FROM tasks WHERE status IN ('working', 'input_required')
  AND (lease_expires_at IS NULL OR lease_expires_at <= 0) AND tool IN (SELECT value FROM json_each('["a"]'))
  ORDER BY created_at, id LIMIT 16) RETURNING *`;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function sqlite(dir: string, open: number): { ours: number; v001: number } {
  const db = new Database(join(dir, `claim-${open}.db`));
  db.pragma('journal_mode = WAL');
  migrate(db);
  // Two tools, one third of the backlog 'b'; 'a' is the tool claimed. Oldest tasks leased (running).
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${open})
     INSERT INTO tasks (id, owner, tool, args, request_digest, wire, status, created_at, updated_at, poll_interval_ms,
                        lease_owner, lease_expires_at)
     SELECT printf('t%07d', i), 'o', CASE WHEN i % 3 = 0 THEN 'b' ELSE 'a' END, '{}', 'd', 'mcp-tasks-ext', 'working',
            i, i, 1000, CASE WHEN i <= 16 THEN 'other' END, CASE WHEN i <= 16 THEN 99999999 END FROM n`,
  ).run();
  db.exec('ANALYZE');
  const time = (claim: () => unknown): number => {
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i += 1) {
      db.exec('BEGIN IMMEDIATE');
      const start = performance.now();
      claim();
      samples.push(performance.now() - start);
      db.exec('ROLLBACK');
    }
    return median(samples);
  };
  const ours = time(() => claimTasks(db, REQUEST));
  // 001's index is gone after migration 002; put it back for the contrast run.
  db.exec('CREATE INDEX tasks_claim ON tasks (status, lease_expires_at)');
  const old = db.prepare(SQLITE_001);
  const v001 = time(() => old.all());
  db.close();
  return { ours, v001 };
}

async function postgres(url: string, open: number): Promise<number> {
  const schema = `claim_bench_${open}_${process.pid}`;
  const store = await openPostgresTaskStore({ connectionString: url, schema });
  await store.close();
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const t = tablesOf(schema);
  try {
    await pool.query(
      `INSERT INTO ${t.tasks} (id, owner, tool, args, request_digest, wire, status, created_at, updated_at,
                               poll_interval_ms, lease_owner, lease_expires_at)
       SELECT 't' || lpad(i::text, 7, '0'), 'o', CASE WHEN i % 3 = 0 THEN 'b' ELSE 'a' END, '{}', 'd', 'mcp-tasks-ext',
              'working', i, i, 1000, CASE WHEN i <= 16 THEN 'other' END, CASE WHEN i <= 16 THEN 99999999 END
       FROM generate_series(1, ${open}) AS i`,
    );
    await pool.query(`ANALYZE ${t.tasks}`);
    const client = await pool.connect();
    const samples: number[] = [];
    try {
      for (let i = 0; i < SAMPLES; i += 1) {
        await client.query('BEGIN');
        const start = performance.now();
        await client.query(CLAIM(t), ['bench', 10_000, 0, 16, ['a']]);
        samples.push(performance.now() - start);
        await client.query('ROLLBACK');
      }
    } finally {
      client.release();
    }
    return median(samples);
  } finally {
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    await pool.end();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pg: { type: 'string' } } });
  const [small, large] = SIZES;
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  out(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'claim-bench-'));
  try {
    const a = sqlite(dir, small);
    const b = sqlite(dir, large);
    out(`SQLite claim, ${large} / ${small} open tasks: ${(b.ours / a.ours).toFixed(2)}x (migration 002)`);
    out(`SQLite claim, ${large} / ${small} open tasks: ${(b.v001 / a.v001).toFixed(2)}x (001's claim, for contrast)`);
    out(`SQLite claim at ${large} open, 001 / 002: ${(b.v001 / b.ours).toFixed(1)}x`);
    if (values.pg !== undefined) {
      const pa = await postgres(values.pg, small);
      const pb = await postgres(values.pg, large);
      out(`PostgreSQL claim, ${large} / ${small} open tasks: ${(pb / pa).toFixed(2)}x (migration 002)`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  out(
    `load average at end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

await main();
