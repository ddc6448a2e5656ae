import type { TaskRecord } from '../../core/task.js';
import { clampLimit, decodeCursor, encodeCursor } from '../cursor.js';
import type { ListQuery, TaskCount, TaskPage } from '../port.js';
import type { Db, Sql } from './db.js';
import { ROWS, TASK_COLUMNS, toRecord, type TaskValues } from './row.js';

// `expires_at > now` is `!isExpired(task, now)`: expired tasks answer as unknown ones (S7, S8).
const GET: Sql = (t) => `
SELECT ${TASK_COLUMNS} FROM ${t.tasks}
WHERE id = $1 AND owner = $2 AND (expires_at IS NULL OR expires_at > $3)`;

export async function getTask(db: Db, owner: string, id: string, now: number): Promise<TaskRecord | null> {
  const row = (await db.query<TaskValues>('get', GET, [id, owner, now], ROWS)).rows[0];
  return row === undefined ? null : toRecord(row);
}

// Newest first by (created_at, id), the order of the memory store (`id` is COLLATE "C", so it
// compares as JavaScript compares strings); the cursor is the last row of the previous page.
// The operator's list (every owner) is its own statement: `$1 IS NULL OR owner = $1` would keep a
// generic plan off the `tasks_owner_newest` index for every caller's list.
const listSql =
  (ownerTerm: string): Sql =>
  (t) => `
SELECT ${TASK_COLUMNS} FROM ${t.tasks}
WHERE ${ownerTerm}
  AND (expires_at IS NULL OR expires_at > $2)
  AND ($3::text[] IS NULL OR status = ANY ($3::text[]))
  AND ($4::text IS NULL OR wire = $4)
  AND ($5::bigint IS NULL OR (created_at, id) < ($5::bigint, $6::text))
ORDER BY created_at DESC, id DESC
LIMIT $7`;
const LIST = listSql('owner = $1');
const LIST_ALL_OWNERS = listSql('$1::text IS NULL');

/** `owner` null: every owner's (the operator's list). */
export async function listTasks(db: Db, owner: string | null, query: ListQuery, now: number): Promise<TaskPage> {
  const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
  const limit = clampLimit(query.limit);
  const rows = (
    await db.query<TaskValues>(
      owner === null ? 'listAllOwners' : 'list',
      owner === null ? LIST_ALL_OWNERS : LIST,
      [
        owner,
        now,
        query.status === undefined ? null : [...query.status],
        query.wire ?? null,
        after?.createdAt ?? null,
        after?.id ?? null,
        limit + 1,
      ],
      ROWS,
    )
  ).rows;
  const tasks = rows.slice(0, limit).map(toRecord);
  const last = tasks.at(-1);
  const nextCursor = rows.length > limit && last !== undefined ? encodeCursor(last) : null;
  return { tasks, nextCursor };
}

const COUNT_BY_STATUS: Sql = (t) => `
SELECT tool, status, count(*)::int AS count FROM ${t.tasks}
WHERE expires_at IS NULL OR expires_at > $1
GROUP BY tool, status`;

/** Unexpired tasks by tool and status: one scan of the table, at scrape time only. */
export async function countByStatus(db: Db, now: number): Promise<TaskCount[]> {
  return (await db.query<TaskCount>('countByStatus', COUNT_BY_STATUS, [now])).rows;
}
