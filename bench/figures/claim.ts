/**
 * Figure 9 (issue 14): the runner's claim (limit 16, one tool of two) at each `claimOpen` size of
 * open tasks, in process, on SQLite (the claim of migration 002 and, for contrast, the claim of 001)
 * and on PostgreSQL (002). The backlog: two tools, one third of it the other tool, the oldest 16
 * leased by another node (running). Each claim runs inside a transaction that is rolled back, so
 * every sample sees the same table; a round's value is the median of `claimSamples` claims, rounds
 * interleaved across sizes. The target: the claim at the largest size within 2x of the smallest.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { CLAIM } from '../../src/store/postgres/claim.js';
import { tablesOf } from '../../src/store/postgres/db.js';
import { openPostgresTaskStore } from '../../src/store/postgres/index.js';
import { claimTasks } from '../../src/store/sqlite/claim.js';
import { migrate } from '../../src/store/sqlite/migrate.js';
import { fmt, ratioTarget, type Row, type Target } from '../lib/report.js';
import { summarize } from '../lib/stats.js';
import type { FigureContext, FigureResult } from './context.js';

const REQUEST = { workerId: 'bench', now: 0, leaseMs: 10_000, limit: 16, tools: ['a'] } as const;

/** 001's claim: `SCAN`/temp B-tree over every open task (kept here only to show the difference). */
const SQLITE_001 = `
UPDATE tasks SET lease_owner = 'bench', lease_expires_at = 10000, epoch = epoch + 1
WHERE id IN (SELECT id FROM tasks WHERE status IN ('working', 'input_required')
  AND (lease_expires_at IS NULL OR lease_expires_at <= 0) AND tool IN (SELECT value FROM json_each('["a"]'))
  ORDER BY created_at, id LIMIT 16) RETURNING *`;

/** A claim timer for one backlog: resolves with the median of `samples` rolled-back claims (ms). */
type Timer = { time(samples: number): Promise<number>; close(): Promise<void> };

function sqliteBacklog(path: string, open: number, variant: '002' | '001'): Timer {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  migrate(db);
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${open})
     INSERT INTO tasks (id, owner, tool, args, request_digest, wire, status, created_at, updated_at, poll_interval_ms,
                        lease_owner, lease_expires_at)
     SELECT printf('t%07d', i), 'o', CASE WHEN i % 3 = 0 THEN 'b' ELSE 'a' END, '{}', 'd', 'mcp-tasks-ext', 'working',
            i, i, 1000, CASE WHEN i <= 16 THEN 'other' END, CASE WHEN i <= 16 THEN 99999999 END FROM n`,
  ).run();
  // 001's index is gone after migration 002; the contrast run puts it back.
  if (variant === '001') db.exec('CREATE INDEX tasks_claim ON tasks (status, lease_expires_at)');
  db.exec('ANALYZE');
  const old = db.prepare(SQLITE_001);
  const claim = variant === '002' ? () => claimTasks(db, REQUEST) : () => old.all();
  return {
    async time(samples) {
      const times: number[] = [];
      for (let i = 0; i < samples; i += 1) {
        db.exec('BEGIN IMMEDIATE');
        const start = performance.now();
        claim();
        times.push(performance.now() - start);
        db.exec('ROLLBACK');
      }
      return summarize(times).median;
    },
    close: async () => void db.close(),
  };
}

async function postgresBacklog(url: string, open: number): Promise<Timer> {
  const schema = `claim_bench_${open}_${process.pid}`;
  const store = await openPostgresTaskStore({ connectionString: url, schema });
  await store.close();
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const t = tablesOf(schema);
  await pool.query(
    `INSERT INTO ${t.tasks} (id, owner, tool, args, request_digest, wire, status, created_at, updated_at,
                             poll_interval_ms, lease_owner, lease_expires_at)
     SELECT 't' || lpad(i::text, 7, '0'), 'o', CASE WHEN i % 3 = 0 THEN 'b' ELSE 'a' END, '{}', 'd', 'mcp-tasks-ext',
            'working', i, i, 1000, CASE WHEN i <= 16 THEN 'other' END, CASE WHEN i <= 16 THEN 99999999 END
     FROM generate_series(1, ${open}) AS i`,
  );
  await pool.query(`ANALYZE ${t.tasks}`);
  return {
    async time(samples) {
      const client = await pool.connect();
      const times: number[] = [];
      try {
        for (let i = 0; i < samples; i += 1) {
          await client.query('BEGIN');
          const start = performance.now();
          await client.query(CLAIM(t), ['bench', 10_000, 0, 16, ['a']]);
          times.push(performance.now() - start);
          await client.query('ROLLBACK');
        }
      } finally {
        client.release();
      }
      return summarize(times).median;
    },
    async close() {
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

interface ClaimVariant {
  readonly id: 'sqlite' | 'sqlite-001' | 'postgres';
  readonly label: string;
  readonly notRun?: string;
  open(size: number): Promise<Timer>;
}

export async function runClaim(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const pgUrl = env.pgUrl;
  const pgNotRun = env.variants.find((v) => v.id === 'postgres')?.notRun;
  const variants: ClaimVariant[] = [
    {
      id: 'sqlite',
      label: 'ours SQLite, claim of migration 002',
      open: async (size) => sqliteBacklog(join(env.dir, `claim-002-${size}.db`), size, '002'),
    },
    {
      id: 'sqlite-001',
      label: "SQLite, 001's claim (contrast)",
      open: async (size) => sqliteBacklog(join(env.dir, `claim-001-${size}.db`), size, '001'),
    },
    {
      id: 'postgres',
      label: 'ours PostgreSQL, claim of migration 002',
      ...(pgNotRun === undefined && pgUrl !== undefined ? {} : { notRun: pgNotRun ?? 'no PostgreSQL' }),
      open: (size) => postgresBacklog(pgUrl!, size),
    },
  ];
  const sizes = [...config.claimOpen].sort((a, b) => a - b);
  const values = new Map<string, number[]>();
  const key = (variant: string, size: number): string => `${variant}/${size}`;
  for (const variant of variants) {
    if (variant.notRun !== undefined) continue;
    for (const size of sizes) {
      ctx.log(`figure 9: ${variant.id}, ${size} open`);
      const timer = await variant.open(size);
      try {
        await timer.time(Math.min(20, config.claimSamples)); // warm-up: page cache, plan cache
        for (let round = 0; round < config.rounds; round += 1) {
          values.set(key(variant.id, size), [
            ...(values.get(key(variant.id, size)) ?? []),
            await timer.time(config.claimSamples),
          ]);
        }
      } finally {
        await timer.close();
      }
    }
  }

  const rows: Row[] = [];
  const targets: Target[] = [];
  const smallest = sizes[0]!;
  const largest = sizes[sizes.length - 1]!;
  const metric = 'claim of 16, median (ms)';
  for (const variant of variants) {
    for (const size of sizes) {
      const setting = `${size.toLocaleString('en-US')} open, ${config.claimSamples} claims per round`;
      if (variant.notRun !== undefined) {
        rows.push({ figure: 9, metric, variant: variant.label, setting, notRun: variant.notRun });
        continue;
      }
      const value = summarize(values.get(key(variant.id, size)) ?? []);
      const base = summarize(values.get(key(variant.id, smallest)) ?? []);
      rows.push({
        figure: 9,
        metric,
        variant: variant.label,
        setting,
        value,
        ...(size === smallest
          ? {}
          : { ratio: { to: `${smallest.toLocaleString('en-US')} open`, value: value.median / base.median } }),
      });
    }
    if (variant.id === 'sqlite-001') continue;
    const a = summarize(values.get(key(variant.id, largest)) ?? []).median;
    const b = summarize(values.get(key(variant.id, smallest)) ?? []).median;
    targets.push(
      ratioTarget({
        issue: 14,
        name: `claim at ${largest.toLocaleString('en-US')} open vs ${smallest.toLocaleString('en-US')} (${variant.id === 'sqlite' ? 'SQLite' : 'PostgreSQL'})`,
        measured: a / b,
        bound: 2,
        atLeast: false,
        unit: `x the claim at ${smallest.toLocaleString('en-US')}`,
        detail: `${fmt(a)} vs ${fmt(b)} ms`,
        ...(variant.notRun === undefined ? {} : { reason: variant.notRun }),
      }),
    );
  }
  return { rows, targets };
}
