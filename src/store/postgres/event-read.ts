import type { LogStream } from '../../core/log.js';
import type { OrderedEvent, OrderedEventKind } from '../../core/task-events.js';
import { clampLimit } from '../cursor.js';
import type { EventQuery, EventRead } from '../port.js';
import type { Db, Sql } from './db.js';
import { getTask } from './read.js';

interface EventRow {
  seq: number;
  at: number;
  kind: OrderedEventKind;
  data: Record<string, unknown>;
  log_seq: number | null;
  line_epoch: number | null;
  line_at: number | null;
  line_text: string | null;
  line_fields: Record<string, unknown> | null;
}

// The line of a `log` event is joined from the log, where it is kept once; a line the log's bound
// dropped leaves its event with no line.
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
  return { task, events: rows.map(toEvent), lastSeq: task.eventSeq };
}

function toEvent(row: EventRow): OrderedEvent {
  const base = { seq: row.seq, at: row.at };
  if (row.kind !== 'log') return { ...base, kind: row.kind, ...row.data } as OrderedEvent;
  const stream = row.data.stream as LogStream;
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
          ...(row.line_fields === null ? {} : { fields: row.line_fields }),
        };
  return { ...base, kind: 'log', logSeq, stream, line };
}
