import type { Database } from 'better-sqlite3';
import { leaseLost, TerminusError } from '../../core/errors.js';
import { isTerminal, type TaskStatus } from '../../core/task.js';
import { logLineBytes, type LogBound, type LogLine, type LogStream, type NewLogLine } from '../../core/log.js';
import { clampLimit } from '../cursor.js';
import type { AppendBound, Fence, LogQuery, LogRead } from '../port.js';
import { appendEvents } from './event-append.js';
import { FENCE, fenceParams } from './fence.js';
import { json, statement, TASK_COLUMN_COUNT, TASK_COLUMNS, taskStatement, toRecord, type TaskValues } from './row.js';

interface LogHead {
  status: TaskStatus;
  log_seq: number;
  log_lines: number;
  log_bytes: number;
  log_dropped: number;
}

interface LogRow {
  seq: number;
  epoch: number;
  at: number;
  stream: string;
  text: string;
  fields: string | null;
}

const HEAD = `SELECT status, log_seq, log_lines, log_bytes, log_dropped FROM tasks WHERE ${FENCE}`;

const INSERT_LINE = `
INSERT INTO task_logs (task_id, seq, epoch, at, stream, text, fields, bytes)
VALUES (@taskId, @seq, @epoch, @at, @stream, @text, @fields, @bytes)`;

const OLDEST = `SELECT seq, bytes FROM task_logs WHERE task_id = @taskId ORDER BY seq`;

const TRIM = `DELETE FROM task_logs WHERE task_id = @taskId AND seq <= @upTo`;

const SET_HEAD = `
UPDATE tasks SET log_seq = @seq, log_lines = @lines, log_bytes = @bytes, log_dropped = @dropped
WHERE ${FENCE}`;

/**
 * A queued, fenced write (S3): the fence check, the lines, the trim of the oldest and the new
 * counters commit in one group-commit savepoint, so a stale epoch writes nothing and a crash keeps
 * either all of one append or none. `updated_at` stays: a log line is not a status change, and
 * clients waiting on `updatedAt` must not wake for every line.
 */
export function appendLog(
  db: Database,
  fence: Fence,
  lines: readonly NewLogLine[],
  bound: LogBound,
  now: number,
  skipped = 0,
  eventBound?: AppendBound,
): LogLine[] {
  const head = statement(db, HEAD).get(fenceParams(fence)) as LogHead | undefined;
  if (head === undefined) throw leaseLost(fence.taskId, fence.epoch);
  if (isTerminal(head.status)) {
    throw new TerminusError('already_terminal', `task ${fence.taskId} is ${head.status}`, {
      details: { taskId: fence.taskId, status: head.status },
    });
  }
  let { log_seq: seq, log_lines: kept, log_bytes: bytes, log_dropped: dropped } = head;
  seq += skipped;
  dropped += skipped;
  const insert = statement(db, INSERT_LINE);
  const stored = lines.map((input): LogLine => {
    seq += 1;
    const line: LogLine = { ...input, seq, epoch: fence.epoch, at: now };
    const size = logLineBytes(line);
    insert.run({
      taskId: fence.taskId,
      seq,
      epoch: fence.epoch,
      at: now,
      stream: line.stream,
      text: line.text,
      fields: json(line.fields),
      bytes: size,
    });
    kept += 1;
    bytes += size;
    return line;
  });
  if (kept > bound.maxLines || bytes > bound.maxBytes) {
    let upTo = 0;
    for (const row of statement(db, OLDEST).iterate({ taskId: fence.taskId }) as Iterable<{
      seq: number;
      bytes: number;
    }>) {
      if (kept <= bound.maxLines && bytes <= bound.maxBytes) break;
      upTo = row.seq;
      kept -= 1;
      bytes -= row.bytes;
      dropped += 1;
    }
    statement(db, TRIM).run({ taskId: fence.taskId, upTo });
  }
  statement(db, SET_HEAD).run({ ...fenceParams(fence), seq, lines: kept, bytes, dropped });
  const events = stored.map((line) => ({ kind: 'log', logSeq: line.seq, stream: line.stream }) as const);
  appendEvents(db, fence.taskId, events, now, eventBound);
  return stored;
}

const VISIBLE = `
SELECT ${TASK_COLUMNS}, log_seq, log_dropped FROM tasks
WHERE id = @id AND owner = @owner AND (expires_at IS NULL OR expires_at > @now)`;
const LOG_SEQ = TASK_COLUMN_COUNT;
const LOG_DROPPED = TASK_COLUMN_COUNT + 1;

const LINES = `
SELECT seq, epoch, at, stream, text, fields FROM task_logs
WHERE task_id = @id AND seq > @after AND seq <= @last
ORDER BY seq
LIMIT @limit`;

/** A direct read; the task row first, then its lines up to the seq that row shows. */
export function readLog(db: Database, owner: string, id: string, query: LogQuery, now: number): LogRead | null {
  const row = taskStatement(db, VISIBLE).get({ id, owner, now }) as TaskValues | undefined;
  if (row === undefined) return null;
  const lastSeq = row[LOG_SEQ] as number;
  const rows = statement(db, LINES).all({
    id,
    after: query.after,
    last: lastSeq,
    limit: clampLimit(query.limit),
  }) as LogRow[];
  return { task: toRecord(row), lines: rows.map(toLine), lastSeq, dropped: row[LOG_DROPPED] as number };
}

function toLine(row: LogRow): LogLine {
  const base = { seq: row.seq, epoch: row.epoch, at: row.at, stream: row.stream as LogStream, text: row.text };
  return row.fields === null ? base : { ...base, fields: JSON.parse(row.fields) as Record<string, unknown> };
}
