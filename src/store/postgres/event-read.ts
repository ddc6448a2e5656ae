import { clampLimit } from '../cursor.js';
import { toOrderedEvent, type EventRow } from '../event-row.js';
import type { EventQuery, EventRead } from '../port.js';
import type { Db, Sql } from './db.js';
import { getTask } from './read.js';

// The line of a `log` event is joined from the log (see `EventRow`).
const EVENTS: Sql = (t) => `
SELECT e.seq::float8 AS seq, e.at::float8 AS at, e.kind, e.data, e.log_seq::float8 AS log_seq,
       l.epoch AS line_epoch, l.at::float8 AS line_at, l.text AS line_text, l.fields AS line_fields
FROM ${t.events} e
LEFT JOIN ${t.logs} l ON l.task_id = e.task_id AND l.seq = e.log_seq
WHERE e.task_id = $1 AND e.seq > $2 AND e.seq <= $3
ORDER BY e.seq
LIMIT $4`;

/** The task row first, then its events up to the seq that row shows (two autocommit reads). */
export async function readEvents(
  db: Db,
  owner: string,
  id: string,
  query: EventQuery,
  now: number,
): Promise<EventRead | null> {
  const task = await getTask(db, owner, id, now);
  if (task === null) return null;
  const params = [id, query.after, task.eventSeq, clampLimit(query.limit)];
  const rows = (await db.query<EventRow>('readEvents', EVENTS, params)).rows;
  return { task, events: rows.map(toOrderedEvent), lastSeq: task.eventSeq };
}
