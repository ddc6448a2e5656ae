import type { Database } from 'better-sqlite3';
import { LIVE, statement } from './row.js';

const SWEEP = `
DELETE FROM tasks
WHERE id IN (
  SELECT id FROM tasks
  WHERE expires_at IS NOT NULL AND expires_at <= @now AND status NOT IN ${LIVE}
  ORDER BY expires_at
  LIMIT @limit)
RETURNING id`;

const SWEEP_LOGS = `DELETE FROM task_logs WHERE task_id IN (SELECT value FROM json_each(@ids))`;

const SWEEP_EVENTS = `DELETE FROM task_events WHERE task_id IN (SELECT value FROM json_each(@ids))`;

/**
 * A queued write. Only terminal tasks carry an `expires_at`, so a working one is never swept (S7).
 * Their logs and events go in the same savepoint (no foreign key: SQLite enforces them only per connection
 * pragma, and a missed one would leave lines nobody can read).
 */
export function sweepExpired(db: Database, now: number, limit: number): number {
  if (limit < 1) return 0;
  const ids = statement(db, SWEEP)
    .pluck()
    .all({ now, limit: Math.floor(limit) }) as string[];
  if (ids.length > 0) {
    statement(db, SWEEP_LOGS).run({ ids: JSON.stringify(ids) });
    statement(db, SWEEP_EVENTS).run({ ids: JSON.stringify(ids) });
  }
  return ids.length;
}

const SWEEP_TOMBSTONES = `
DELETE FROM submission_keys
WHERE (owner, submission_key) IN (
  SELECT owner, submission_key FROM submission_keys
  WHERE task_id IS NULL AND created_at <= @before
  LIMIT @limit)`;

/** A queued write: tombstones only (task_id NULL); a key a task used stays spent (S5, S6). */
export function sweepTombstones(db: Database, before: number, limit: number): number {
  if (limit < 1) return 0;
  return statement(db, SWEEP_TOMBSTONES).run({ before, limit: Math.floor(limit) }).changes;
}

// `+owner` keeps the planner off the owner index (all of an owner's tasks, finished ones included):
// the live-status index visits only unfinished tasks, which the caps keep few.
const COUNT_LIVE = `SELECT count(*) FROM tasks WHERE +owner = @owner AND status IN ${LIVE}`;

/** A direct read on the owner index. */
export function countLive(db: Database, owner: string): number {
  return statement(db, COUNT_LIVE).pluck().get({ owner }) as number;
}
