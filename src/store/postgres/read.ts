import type { TaskRecord } from '../../core/task.js';
import type { BatchOutcome } from '../../sql/pg-batch.js';
import { clampLimit, decodeCursor, encodeCursor } from '../cursor.js';
import type { ListQuery, TaskCount, TaskPage } from '../port.js';
import type { Db, Sql } from './db.js';
import { ROWS, TASK_COLUMN_COUNT, TASK_COLUMNS, taskColumnsOf, toRecord, type TaskValues } from './row.js';

/** One `get` as `getTasks` takes it. */
export interface GetItem {
  readonly owner: string;
  readonly id: string;
  readonly now: number;
}

/**
 * The `get`s of one event-loop turn in one statement (`createBatcher`): each item finds its task
 * only if the owner matches and it has not expired at the item's own `now` (`expires_at > now` is
 * `!isExpired(task, now)`), so an expired, foreign or unknown task answers null alike (S7, S8).
 *
 * Each statement is prepared once per connection so that PostgreSQL plans it once, and its plan
 * cache keeps that generic plan only while it looks no dearer than a plan made for the call's own
 * values. The items come as one jsonb, whose row count no plan can see (it guesses 100 either
 * way), not as arrays: an array parameter is guessed at 10 elements in the generic plan and known
 * in a custom one, so a batch of fewer than about 10 was planned afresh on every execution, which
 * costs PostgreSQL about as much as the read. A lone `get` reads with scalars (`GET_ONE`), whose
 * generic plan is the custom one. test/store/pg-plan-cache.test.ts counts the plans.
 */
const GET_BATCH: Sql = (t) => `
SELECT ${taskColumnsOf('task')}, wanted.ord
FROM jsonb_to_recordset($1::jsonb) AS wanted(ord int, id text, owner text, now bigint)
JOIN ${t.tasks} AS task ON task.id = wanted.id AND task.owner = wanted.owner
WHERE task.expires_at IS NULL OR task.expires_at > wanted.now`;

const GET_ONE: Sql = (t) => `
SELECT ${TASK_COLUMNS} FROM ${t.tasks}
WHERE id = $1 AND owner = $2 AND (expires_at IS NULL OR expires_at > $3)`;

export async function getTasks(db: Db, items: readonly GetItem[]): Promise<BatchOutcome<TaskRecord | null>[]> {
  const [only] = items;
  if (items.length === 1 && only !== undefined) {
    return [{ ok: true, value: await getTask(db, only.owner, only.id, only.now) }];
  }
  const wanted = JSON.stringify(items.map((i, ord) => ({ ord, id: i.id, owner: i.owner, now: i.now })));
  const rows = (await db.query<TaskValues>('get', GET_BATCH, [wanted], ROWS)).rows;
  const found = new Map(rows.map((row) => [row[TASK_COLUMN_COUNT] as number, row]));
  return items.map((_item, i) => {
    const row = found.get(i);
    return { ok: true, value: row === undefined ? null : toRecord(row) };
  });
}

/** One `get` alone (`GET_ONE`). */
export async function getTask(db: Db, owner: string, id: string, now: number): Promise<TaskRecord | null> {
  const row = (await db.query<TaskValues>('get', GET_ONE, [id, owner, now], ROWS)).rows[0];
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
