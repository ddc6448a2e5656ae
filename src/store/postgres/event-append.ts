import { eventData, isDroppable, type NewOrderedEvent } from '../../core/task-events.js';
import type { TaskRecord } from '../../core/task.js';
import type { AppendBound } from '../port.js';
import type { Sql, Tx } from './db.js';

/**
 * The CTE that adds the webhook outbox rows of the status events in `added` (task $1, time $5): one
 * per endpoint of the task (`head.webhooks`) whose event set takes the status.
 */
const outboxOfAdded: Sql = (t) => `outbox AS (
  INSERT INTO ${t.outbox} (task_id, seq, endpoint, owner, tool, url, secret, status, status_message, event_at,
                           state, attempts, next_at, created_at)
  SELECT $1, added.seq, w.ord, head.owner, head.tool, w.hook->>'url', w.hook->>'secret', added.data->>'status',
         added.data->>'statusMessage', $5, 'pending', 0, $5, $5
  FROM head CROSS JOIN added
  CROSS JOIN LATERAL jsonb_array_elements(COALESCE(head.webhooks, '[]'::jsonb)) WITH ORDINALITY AS w (hook, ord)
  WHERE added.kind = 'status'
    AND (w.hook->>'events' = 'all' OR added.data->>'status' IN ('completed', 'failed', 'cancelled'))
)`;

/**
 * One statement: bumps the task's `event_seq` by the number of events (locking the row until the
 * transaction ends), inserts them numbered up to the new value in the order given, and adds the
 * webhook outbox rows of its status events: one per endpoint of the task whose event set takes
 * the status (none for a task without webhooks).
 */
const APPEND: Sql = (t) => `
WITH head AS (
  UPDATE ${t.tasks} SET event_seq = event_seq + cardinality($2::text[]) WHERE id = $1
  RETURNING event_seq, owner, tool, webhooks
), added AS (
  INSERT INTO ${t.events} (task_id, seq, at, kind, data, log_seq)
  SELECT $1, head.event_seq - cardinality($2::text[]) + e.ord, $5, e.kind, e.data, e.log_seq
  FROM head, unnest($2::text[], $3::jsonb[], $4::bigint[]) WITH ORDINALITY AS e (kind, data, log_seq, ord)
  RETURNING seq, kind, data
), ${outboxOfAdded(t)}
SELECT seq::float8 AS seq FROM added`;

const DROPPABLE = `('progress', 'log')`;

/**
 * `APPEND` under the per-task bound ($6 the most droppable events kept, $7 how many of this write's
 * are droppable): keeps the newest $6 `progress`/`log` events of the task. A droppable event of this
 * write already beyond the bound gets its seq but no row; the oldest kept rows beyond it are deleted
 * (the DELETE's snapshot does not see this statement's inserts, so it only reaches older rows).
 * `was` reads the count of a row the caller's transaction has already locked: the writes that append
 * droppable events (`progress`, `appendLog`) update the task row first, so no other writer can
 * change it between that read and the UPDATE. Answers the last seq and how many were dropped.
 */
const APPEND_BOUNDED: Sql = (t) => `
WITH was AS (
  SELECT event_kept FROM ${t.tasks} WHERE id = $1
), head AS (
  UPDATE ${t.tasks} task SET event_seq = task.event_seq + cardinality($2::text[]),
                             event_kept = LEAST($6::bigint, was.event_kept + $7::bigint)
  FROM was WHERE task.id = $1
  RETURNING task.event_seq, was.event_kept AS kept_before, task.owner, task.tool, task.webhooks
), batch AS (
  SELECT e.kind, e.data, e.log_seq, e.ord,
         count(*) FILTER (WHERE e.kind IN ${DROPPABLE}) OVER (ORDER BY e.ord) AS drop_rank
  FROM unnest($2::text[], $3::jsonb[], $4::bigint[]) WITH ORDINALITY AS e (kind, data, log_seq, ord)
), added AS (
  INSERT INTO ${t.events} (task_id, seq, at, kind, data, log_seq)
  SELECT $1, head.event_seq - cardinality($2::text[]) + b.ord, $5, b.kind, b.data, b.log_seq
  FROM head, batch b
  WHERE b.kind NOT IN ${DROPPABLE} OR b.drop_rank > $7::bigint - $6::bigint
  RETURNING seq, kind, data
), trimmed AS (
  DELETE FROM ${t.events} WHERE task_id = $1 AND seq IN (
    SELECT seq FROM ${t.events} WHERE task_id = $1 AND kind IN ${DROPPABLE} ORDER BY seq
    LIMIT (SELECT GREATEST(0, LEAST(kept_before, kept_before + $7::bigint - $6::bigint)) FROM head))
), ${outboxOfAdded(t)}
SELECT event_seq::float8 AS seq, GREATEST(0, kept_before + $7::bigint - $6::bigint)::float8 AS dropped FROM head`;

/**
 * Appends `events` to the task's sequence inside the caller's transaction (the one that writes the
 * change they record, so both commit or neither does: no gap, issue 32) and returns the seq of the
 * last one. Composable: any write joins it with its own `tx`.
 */
export async function appendEvents(
  tx: Tx,
  taskId: string,
  events: readonly NewOrderedEvent[],
  now: number,
  bound?: AppendBound,
): Promise<number> {
  const params = [
    taskId,
    events.map((e) => e.kind),
    events.map((e) => JSON.stringify(eventData(e))),
    events.map((e) => (e.kind === 'log' ? e.logSeq : null)),
    now,
  ];
  if (bound !== undefined) {
    const droppable = events.filter((e) => isDroppable(e.kind)).length;
    const [head] = (
      await tx.query<{ seq: number; dropped: number }>(APPEND_BOUNDED, [...params, bound.maxKept, droppable])
    ).rows;
    if (head === undefined) throw new Error(`appendEvents: task ${taskId} has no row`);
    if (head.dropped > 0) bound.onDropped?.(head.dropped);
    return head.seq;
  }
  const rows = (await tx.query<{ seq: number }>(APPEND, params)).rows;
  return Math.max(...rows.map((r) => r.seq));
}

/** `appendEvents` for a write that returns the task: the task as stored, with its new `eventSeq`. */
export async function withEvents(
  tx: Tx,
  task: TaskRecord,
  events: readonly NewOrderedEvent[],
  now: number,
  bound?: AppendBound,
): Promise<TaskRecord> {
  return events.length === 0 ? task : { ...task, eventSeq: await appendEvents(tx, task.id, events, now, bound) };
}
