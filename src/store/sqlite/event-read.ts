import type { Database } from 'better-sqlite3';
import type { OrderedEvent } from '../../core/task-events.js';
import { clampLimit } from '../cursor.js';
import { toOrderedEvent, type EventRow } from '../event-row.js';
import type { EventQuery, EventRead } from '../port.js';
import { getTask } from './read.js';
import { statement } from './row.js';

/** A row as better-sqlite3 reads it: the JSON columns are text. */
interface SqliteEventRow extends Omit<EventRow, 'data' | 'line_fields'> {
  readonly data: string;
  readonly line_fields: string | null;
}

// The line of a `log` event is joined from the log (see `EventRow`).
const EVENTS = `
SELECT e.seq, e.at, e.kind, e.data, e.log_seq,
       l.epoch AS line_epoch, l.at AS line_at, l.text AS line_text, l.fields AS line_fields
FROM task_events e
LEFT JOIN task_logs l ON l.task_id = e.task_id AND l.seq = e.log_seq
WHERE e.task_id = @id AND e.seq > @after AND e.seq <= @last
ORDER BY e.seq
LIMIT @limit`;

/** A direct read: the task row first, then its events up to the seq that row shows. */
export function readEvents(db: Database, owner: string, id: string, query: EventQuery, now: number): EventRead | null {
  const task = getTask(db, owner, id, now);
  if (task === null) return null;
  const rows = statement(db, EVENTS).all({
    id,
    after: query.after,
    last: task.eventSeq,
    limit: clampLimit(query.limit),
  }) as SqliteEventRow[];
  return { task, events: rows.map(parsed), lastSeq: task.eventSeq };
}

function parsed(row: SqliteEventRow): OrderedEvent {
  return toOrderedEvent({
    ...row,
    data: JSON.parse(row.data) as Record<string, unknown>,
    line_fields: row.line_fields === null ? null : (JSON.parse(row.line_fields) as Record<string, unknown>),
  });
}
