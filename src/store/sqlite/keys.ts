import type { Database } from 'better-sqlite3';
import { taskNotFound } from '../../core/errors.js';
import { isExpired, type TaskRecord } from '../../core/task.js';
import type { KeyLookup } from '../port.js';
import { statement, TASK_COLUMNS, taskStatement, toRecord, type TaskValues } from './row.js';

interface KeyRow {
  task_id: string | null;
}

const SELECT_KEY = `SELECT task_id FROM submission_keys WHERE owner = @owner AND submission_key = @key`;

export function selectKey(db: Database, owner: string, key: string): KeyRow | undefined {
  return statement(db, SELECT_KEY).get({ owner, key }) as KeyRow | undefined;
}

const INSERT_KEY = `
INSERT INTO submission_keys (owner, submission_key, task_id, created_at) VALUES (@owner, @key, @taskId, @now)`;

/** `taskId` null writes a tombstone (S6). */
export function insertKey(db: Database, owner: string, key: string, taskId: string | null, now: number): void {
  statement(db, INSERT_KEY).run({ owner, key, taskId, now });
}

const SELECT_TASK = `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = @id`;

/** Unfiltered by owner or expiry: for the store's own checks, never handed to a caller as is. */
export function selectTask(db: Database, id: string): TaskRecord | null {
  const row = taskStatement(db, SELECT_TASK).get({ id }) as TaskValues | undefined;
  return row === undefined ? null : toRecord(row);
}

/**
 * Runs as a queued write: an unused key is burned in the same transaction that answers
 * `never_created` (S6). A key whose task expired or was swept rejects `not_found`: the task was
 * created, so "never created" would be a lie, and the task itself is gone (S7).
 */
export function lookupKey(db: Database, owner: string, key: string, now: number): KeyLookup {
  const used = selectKey(db, owner, key);
  if (used === undefined) {
    insertKey(db, owner, key, null, now);
    return { kind: 'never_created' };
  }
  if (used.task_id === null) return { kind: 'never_created' };
  const task = selectTask(db, used.task_id);
  if (task === null || isExpired(task, now)) throw taskNotFound();
  return { kind: 'found', task };
}
