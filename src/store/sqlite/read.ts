import type { Database } from 'better-sqlite3';
import type { TaskRecord } from '../../core/task.js';
import { clampLimit, decodeCursor, encodeCursor } from '../cursor.js';
import type { ListQuery, TaskCount, TaskPage } from '../port.js';
import { statement, TASK_COLUMNS, taskStatement, toRecord, type TaskValues } from './row.js';

// Reads run directly, outside the write queue: a batch runs synchronously inside one transaction,
// so a read on this connection never sees a half-applied batch.

const SELECT_VISIBLE = `
SELECT ${TASK_COLUMNS} FROM tasks
WHERE id = @id AND owner = @owner AND (expires_at IS NULL OR expires_at > @now)`;

/** The task if `owner` may see it at `now` (S7, S8). */
export function getTask(db: Database, owner: string, id: string, now: number): TaskRecord | null {
  const row = taskStatement(db, SELECT_VISIBLE).get({ id, owner, now }) as TaskValues | undefined;
  return row === undefined ? null : toRecord(row);
}

// The owner's page walks the `tasks_owner` index; the operator's (every owner) is a separate
// statement, so `owner = @owner` never becomes an OR that the planner cannot take the index for.
const pageSql = (ownerTerm: string): string => `
SELECT ${TASK_COLUMNS} FROM tasks
WHERE ${ownerTerm}
  AND (expires_at IS NULL OR expires_at > @now)
  AND (@afterCreatedAt IS NULL OR created_at < @afterCreatedAt
       OR (created_at = @afterCreatedAt AND id < @afterId))
  AND (@statuses IS NULL OR status IN (SELECT value FROM json_each(@statuses)))
  AND (@wire IS NULL OR wire = @wire)
ORDER BY created_at DESC, id DESC
LIMIT @limit`;
const SELECT_PAGE = pageSql('owner = @owner');
const SELECT_PAGE_ALL_OWNERS = pageSql('1 = 1');

/** Keyset pagination on `(created_at, id)`: stable under inserts, no offsets to drift. `owner` null: every owner's. */
export function listTasks(db: Database, owner: string | null, query: ListQuery, now: number): TaskPage {
  const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
  const limit = clampLimit(query.limit);
  const rows = taskStatement(db, owner === null ? SELECT_PAGE_ALL_OWNERS : SELECT_PAGE).all({
    ...(owner === null ? {} : { owner }),
    now,
    afterCreatedAt: after?.createdAt ?? null,
    afterId: after?.id ?? null,
    statuses: query.status === undefined ? null : JSON.stringify(query.status),
    wire: query.wire ?? null,
    limit: limit + 1,
  }) as TaskValues[];
  const tasks = rows.slice(0, limit).map(toRecord);
  const last = tasks.at(-1);
  const nextCursor = rows.length > limit && last !== undefined ? encodeCursor(last) : null;
  return { tasks, nextCursor };
}

const COUNT_BY_STATUS = `
SELECT tool, status, count(*) AS count FROM tasks
WHERE expires_at IS NULL OR expires_at > @now
GROUP BY tool, status`;

/** Unexpired tasks by tool and status: one scan of the table, at scrape time only. */
export function countByStatus(db: Database, now: number): TaskCount[] {
  return statement(db, COUNT_BY_STATUS).all({ now }) as TaskCount[];
}
