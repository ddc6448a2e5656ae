import type { Database } from 'better-sqlite3';
import type { LogStream } from '../../core/log.js';
import type { OrderedEvent, OrderedEventKind } from '../../core/task-events.js';
import { clampLimit } from '../cursor.js';
import type { EventQuery, EventRead } from '../port.js';
import { getTask } from './read.js';
import { statement } from './row.js';

interface EventRow {
  seq: number;
  at: number;
  kind: OrderedEventKind;
  data: string;
  log_seq: number | null;
  line_epoch: number | null;
  line_at: number | null;
  line_text: string | null;
  line_fields: string | null;
}

// The line of a `log` event is joined from the log, where it is kept once; a line the log's bound
// dropped leaves its event with no line.
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
  }) as EventRow[];
  return { task, events: rows.map(toEvent), lastSeq: task.eventSeq };
}

function toEvent(row: EventRow): OrderedEvent {
  const data = JSON.parse(row.data) as Record<string, unknown>;
  const base = { seq: row.seq, at: row.at };
  if (row.kind !== 'log') return { ...base, kind: row.kind, ...data } as OrderedEvent;
  const stream = data.stream as LogStream;
  const logSeq = row.log_seq as number;
  const line =
    row.line_text === null
      ? null
      : {
          seq: logSeq,
          epoch: row.line_epoch as number,
          at: row.line_at as number,
          stream,
          text: row.line_text,
          ...(row.line_fields === null ? {} : { fields: JSON.parse(row.line_fields) as Record<string, unknown> }),
        };
  return { ...base, kind: 'log', logSeq, stream, line };
}
