import type { Db, Sql } from './db.js';
import { LIVE, TERMINAL } from './row.js';

/**
 * Only terminal tasks have an expiry at all (`expires_at` is NULL while a task works), so a
 * working task is never swept (S7). `SKIP LOCKED` lets several nodes sweep at once without
 * waiting on each other; the oldest expiries go first. Submission keys stay: a spent key stays
 * spent after its task is gone (S6).
 */
const SWEEP: Sql = (t) => `
DELETE FROM ${t.tasks}
WHERE id IN (
  SELECT id FROM ${t.tasks}
  WHERE expires_at IS NOT NULL AND expires_at <= $1 AND status IN ${TERMINAL}
  ORDER BY expires_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED)`;

export async function sweepExpired(db: Db, now: number, limit: number): Promise<number> {
  const max = Math.max(0, Math.floor(limit));
  if (max === 0) return 0;
  return (await db.query('sweepExpired', SWEEP, [now, max])).rowCount ?? 0;
}

const SWEEP_TOMBSTONES: Sql = (t) => `
DELETE FROM ${t.keys}
WHERE (owner, submission_key) IN (
  SELECT owner, submission_key FROM ${t.keys}
  WHERE task_id IS NULL AND created_at <= $1
  LIMIT $2
  FOR UPDATE SKIP LOCKED)`;

/** Tombstones only (task_id NULL): a key a task used stays spent (S5, S6). */
export async function sweepTombstones(db: Db, before: number, limit: number): Promise<number> {
  const max = Math.max(0, Math.floor(limit));
  if (max === 0) return 0;
  return (await db.query('sweepTombstones', SWEEP_TOMBSTONES, [before, max])).rowCount ?? 0;
}

const COUNT_LIVE: Sql = (t) => `SELECT count(*)::int AS n FROM ${t.tasks} WHERE owner = $1 AND status IN ${LIVE}`;

export async function countLive(db: Db, owner: string): Promise<number> {
  const result = await db.query<{ n: number }>('countLive', COUNT_LIVE, [owner]);
  return result.rows[0]?.n ?? 0;
}
