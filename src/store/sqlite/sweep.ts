import type { Database } from 'better-sqlite3';
import { LIVE, statement } from './row.js';

const SWEEP = `
DELETE FROM tasks
WHERE id IN (
  SELECT id FROM tasks
  WHERE expires_at IS NOT NULL AND expires_at <= @now AND status NOT IN ${LIVE}
  ORDER BY expires_at
  LIMIT @limit)`;

/** A queued write. Only terminal tasks carry an `expires_at`, so a working one is never swept (S7). */
export function sweepExpired(db: Database, now: number, limit: number): number {
  if (limit < 1) return 0;
  return statement(db, SWEEP).run({ now, limit: Math.floor(limit) }).changes;
}
