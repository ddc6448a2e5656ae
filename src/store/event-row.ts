import type { LogStream } from '../core/log.js';
import type { OrderedEvent, OrderedEventKind } from '../core/task-events.js';

/**
 * An event row as both SQL stores read it: the `task_events` columns, and the line of a `log`
 * event joined from the task log (where it is kept once; a line the log's bound dropped leaves its
 * event with no line). JSON columns arrive already parsed: each store parses its own.
 */
export interface EventRow {
  readonly seq: number;
  readonly at: number;
  readonly kind: OrderedEventKind;
  readonly data: Record<string, unknown>;
  readonly log_seq: number | null;
  readonly line_epoch: number | null;
  readonly line_at: number | null;
  readonly line_text: string | null;
  readonly line_fields: Record<string, unknown> | null;
}

/** The event a row holds; a `log` event carries its line, or null when the log dropped it. */
export function toOrderedEvent(row: EventRow): OrderedEvent {
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
