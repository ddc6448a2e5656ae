import type { Database } from 'better-sqlite3';
import { statement } from './row.js';

// `owner >= @from AND owner < @past` is "starts with @from" as a range the owner indexes can walk
// (SQLite compares TEXT byte-wise, BINARY, which is what a prefix needs).

const COUNT = `SELECT count(*) FROM tasks WHERE owner >= @from AND owner < @past`;

/** A direct read on the owner index. */
export function countOwners(db: Database, prefix: string): number {
  return statement(db, COUNT).pluck().get(range(prefix)) as number;
}

// Tasks first: a task is skipped when its new owner already has its key (every keyed task has a
// key row), then the keys the skipped tasks kept are skipped by the same test.
const RENAME_TASKS = `
UPDATE tasks SET owner = @to || substr(owner, @cut)
WHERE owner >= @from AND owner < @past
  AND (submission_key IS NULL OR NOT EXISTS (
    SELECT 1 FROM submission_keys k
    WHERE k.owner = @to || substr(tasks.owner, @cut) AND k.submission_key = tasks.submission_key))`;

const RENAME_KEYS = `
UPDATE submission_keys SET owner = @to || substr(owner, @cut)
WHERE owner >= @from AND owner < @past
  AND NOT EXISTS (
    SELECT 1 FROM submission_keys k
    WHERE k.owner = @to || substr(submission_keys.owner, @cut) AND k.submission_key = submission_keys.submission_key)`;

/** A queued write (one savepoint of a group commit): both tables or neither. */
export function renameOwners(db: Database, from: string, to: string): number {
  const params = { ...range(from), to, cut: from.length + 1 };
  const renamed = statement(db, RENAME_TASKS).run(params).changes;
  statement(db, RENAME_KEYS).run(params);
  return renamed;
}

/** `from` and the least string above every string that starts with it. */
function range(prefix: string): { from: string; past: string } {
  if (prefix === '') throw new RangeError('an owner prefix must not be empty');
  const last = prefix.charCodeAt(prefix.length - 1);
  return { from: prefix, past: prefix.slice(0, -1) + String.fromCharCode(last + 1) };
}
