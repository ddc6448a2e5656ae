import type { Db, Sql } from './db.js';
import { TERMINAL } from './row.js';

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
