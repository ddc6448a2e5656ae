import type { Db, Sql } from './db.js';

// `starts_with` rather than LIKE: a prefix holds `%` or `_` as themselves (an issuer URL may).
// Both run once per start of a server that migrates owners: a scan is acceptable there.

const COUNT: Sql = (t) => `SELECT count(*)::int AS n FROM ${t.tasks} WHERE starts_with(owner, $1)`;

export async function countOwners(db: Db, prefix: string): Promise<number> {
  return (await db.query<{ n: number }>('countOwners', COUNT, [prefix])).rows[0]?.n ?? 0;
}

// Tasks first: a task is skipped when its new owner already has its key (every keyed task has a
// key row), then the keys the skipped tasks kept are skipped by the same test.
const RENAME_TASKS: Sql = (t) => `
UPDATE ${t.tasks} AS tk SET owner = $2 || substr(tk.owner, $3)
WHERE starts_with(tk.owner, $1)
  AND (tk.submission_key IS NULL OR NOT EXISTS (
    SELECT 1 FROM ${t.keys} k
    WHERE k.owner = $2 || substr(tk.owner, $3) AND k.submission_key = tk.submission_key))`;

const RENAME_KEYS: Sql = (t) => `
UPDATE ${t.keys} AS sk SET owner = $2 || substr(sk.owner, $3)
WHERE starts_with(sk.owner, $1)
  AND NOT EXISTS (
    SELECT 1 FROM ${t.keys} k
    WHERE k.owner = $2 || substr(sk.owner, $3) AND k.submission_key = sk.submission_key)`;

/** Both tables in one transaction. */
export async function renameOwners(db: Db, from: string, to: string): Promise<number> {
  if (from === '') throw new RangeError('an owner prefix must not be empty');
  const params = [from, to, [...from].length + 1];
  return db.transaction('renameOwners', async (tx) => {
    const renamed = (await tx.query(RENAME_TASKS, params)).rowCount ?? 0;
    await tx.query(RENAME_KEYS, params);
    return renamed;
  });
}
