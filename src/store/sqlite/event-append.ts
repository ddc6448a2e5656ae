import type { Database } from 'better-sqlite3';
import { eventData, type NewOrderedEvent } from '../../core/task-events.js';
import { isTerminal, type TaskRecord } from '../../core/task.js';
import { statement } from './row.js';

const BUMP = `UPDATE tasks SET event_seq = event_seq + @count WHERE id = @taskId RETURNING event_seq`;

const INSERT_EVENT = `
INSERT INTO task_events (task_id, seq, at, kind, data, log_seq)
VALUES (@taskId, @seq, @at, @kind, @data, @logSeq)`;

/** `appendEvents` for a write that returns the task: the task as stored, with its new `eventSeq`. */
export function withEvents(
  db: Database,
  task: TaskRecord,
  events: readonly NewOrderedEvent[],
  now: number,
): TaskRecord {
  return events.length === 0 ? task : { ...task, eventSeq: appendEvents(db, task.id, events, now) };
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
 */
export function appendEvents(db: Database, taskId: string, events: readonly NewOrderedEvent[], now: number): number {
  const last = statement(db, BUMP).pluck().get({ taskId, count: events.length }) as number;
  const insert = statement(db, INSERT_EVENT);
  let seq = last - events.length;
  for (const event of events) {
    insert.run({
      taskId,
      seq: ++seq,
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
  return last;
}
