import type { Database } from 'better-sqlite3';
import { eventData, isDroppable, type NewOrderedEvent } from '../../core/task-events.js';
import type { AppendBound } from '../port.js';
import { isTerminal, type TaskRecord } from '../../core/task.js';
import { statement } from './row.js';

const BUMP = `
UPDATE tasks SET event_seq = event_seq + @count, event_kept = event_kept + @droppable
WHERE id = @taskId RETURNING event_seq, event_kept`;

const INSERT_EVENT = `
INSERT INTO task_events (task_id, seq, at, kind, data, log_seq)
VALUES (@taskId, @seq, @at, @kind, @data, @logSeq)`;

// The oldest droppable rows of a task beyond its bound (the primary key reads them in seq order).
const TRIM = `
DELETE FROM task_events WHERE task_id = @taskId AND seq IN (
  SELECT seq FROM task_events WHERE task_id = @taskId AND kind IN ('progress', 'log') ORDER BY seq LIMIT @count)`;

const SET_KEPT = `UPDATE tasks SET event_kept = @kept WHERE id = @taskId`;

/** `appendEvents` for a write that returns the task: the task as stored, with its new `eventSeq`. */
export function withEvents(
  db: Database,
  task: TaskRecord,
  events: readonly NewOrderedEvent[],
  now: number,
  bound?: AppendBound,
): TaskRecord {
  return events.length === 0 ? task : { ...task, eventSeq: appendEvents(db, task.id, events, now, bound) };
}

// One outbox row per endpoint of the task whose event set takes this status (issue 32); none
// for a task without webhooks (the common case: one indexed read of its row).
const ENQUEUE_WEBHOOKS = `
INSERT INTO webhook_outbox (task_id, seq, endpoint, owner, tool, url, secret, status, status_message, event_at,
                            state, attempts, next_at, created_at)
SELECT t.id, @seq, w.key + 1, t.owner, t.tool, json_extract(w.value, '$.url'), json_extract(w.value, '$.secret'),
       @status, @statusMessage, @now, 'pending', 0, @now, @now
FROM tasks t, json_each(t.webhooks) w
WHERE t.id = @taskId AND t.webhooks IS NOT NULL AND (json_extract(w.value, '$.events') = 'all' OR @terminal = 1)`;

/**
 * Appends `events` to the task's sequence, numbered from its `event_seq` + 1, with the webhook
 * outbox rows of its status events, and returns the seq of the last one. Runs inside the caller's group-commit savepoint, after the write the
 * events record: both commit together or neither does, so seqs have no gap (issue 32). Writes are
 * serialised by the write queue, so no two appends to one task interleave.
 *
 * With a `bound`, a task keeps its newest `maxKept` progress and log events: the oldest beyond are
 * deleted in the same savepoint, and a droppable event of this write that is already beyond it is
 * numbered but never inserted. Every seq is still assigned once; a read counts the missing ones.
 */
export function appendEvents(
  db: Database,
  taskId: string,
  events: readonly NewOrderedEvent[],
  now: number,
  bound?: AppendBound,
): number {
  const droppable = bound === undefined ? 0 : events.filter((e) => isDroppable(e.kind)).length;
  const head = statement(db, BUMP).get({ taskId, count: events.length, droppable }) as {
    event_seq: number;
    event_kept: number;
  };
  const last = head.event_seq;
  // Droppable events of this write with a rank up to `skip` are beyond the bound at once.
  const excess = bound === undefined ? 0 : Math.max(0, head.event_kept - bound.maxKept);
  const skip = Math.max(0, droppable - (bound?.maxKept ?? droppable));
  const insert = statement(db, INSERT_EVENT);
  let seq = last - events.length;
  let rank = 0;
  for (const event of events) {
    seq += 1;
    if (bound !== undefined && isDroppable(event.kind) && ++rank <= skip) continue;
    insert.run({
      taskId,
      seq,
      at: now,
      kind: event.kind,
      data: JSON.stringify(eventData(event)),
      logSeq: event.kind === 'log' ? event.logSeq : null,
    });
    if (event.kind === 'status') {
      statement(db, ENQUEUE_WEBHOOKS).run({
        taskId,
        seq,
        status: event.status,
        statusMessage: event.statusMessage,
        now,
        terminal: isTerminal(event.status) ? 1 : 0,
      });
    }
  }
  if (excess > 0 && bound !== undefined) {
    // The rows dropped from before this write; its own skipped ones were never inserted.
    const older = excess - skip;
    if (older > 0) statement(db, TRIM).run({ taskId, count: older });
    statement(db, SET_KEPT).run({ taskId, kept: bound.maxKept });
    bound.onDropped?.(excess);
  }
  return last;
}
