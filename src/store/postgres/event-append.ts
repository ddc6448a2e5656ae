import { eventData, type NewOrderedEvent } from '../../core/task-events.js';
import type { TaskRecord } from '../../core/task.js';
import type { Sql, Tx } from './db.js';

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
), outbox AS (
  INSERT INTO ${t.outbox} (task_id, seq, endpoint, owner, tool, url, secret, status, status_message, event_at,
                           state, attempts, next_at, created_at)
  SELECT $1, added.seq, w.ord, head.owner, head.tool, w.hook->>'url', w.hook->>'secret', added.data->>'status',
         added.data->>'statusMessage', $5, 'pending', 0, $5, $5
  FROM head CROSS JOIN added
  CROSS JOIN LATERAL jsonb_array_elements(COALESCE(head.webhooks, '[]'::jsonb)) WITH ORDINALITY AS w (hook, ord)
  WHERE added.kind = 'status'
    AND (w.hook->>'events' = 'all' OR added.data->>'status' IN ('completed', 'failed', 'cancelled'))
)
SELECT seq::float8 AS seq FROM added`;

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
): Promise<number> {
  const rows = (
    await tx.query<{ seq: number }>(APPEND, [
      taskId,
      events.map((e) => e.kind),
      events.map((e) => JSON.stringify(eventData(e))),
      events.map((e) => (e.kind === 'log' ? e.logSeq : null)),
      now,
    ])
  ).rows;
  return Math.max(...rows.map((r) => r.seq));
}

/** `appendEvents` for a write that returns the task: the task as stored, with its new `eventSeq`. */
export async function withEvents(
  tx: Tx,
  task: TaskRecord,
  events: readonly NewOrderedEvent[],
  now: number,
): Promise<TaskRecord> {
  return events.length === 0 ? task : { ...task, eventSeq: await appendEvents(tx, task.id, events, now) };
}
