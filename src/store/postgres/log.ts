import { leaseLost, TerminusError } from '../../core/errors.js';
import { logLineBytes, type LogBound, type LogLine, type LogStream, type NewLogLine } from '../../core/log.js';
import { isTerminal, type TaskStatus } from '../../core/task.js';
import { clampLimit } from '../cursor.js';
import type { AppendBound, Fence, LogQuery, LogRead } from '../port.js';
import type { Db, Sql } from './db.js';
import { appendEvents } from './event-append.js';
import { json, ROWS, TASK_COLUMN_COUNT, TASK_COLUMNS, toRecord, type TaskValues } from './row.js';

// Counters are bigint columns; cast to float8 so pg hands back numbers (all stay far below 2^53).
const HEAD_COLUMNS = `log_seq::float8 AS log_seq, log_lines::float8 AS log_lines, log_bytes::float8 AS log_bytes,
  log_dropped::float8 AS log_dropped`;

interface LogHead {
  status: TaskStatus;
  log_seq: number;
  log_lines: number;
  log_bytes: number;
  log_dropped: number;
}

/** Locks the task row under the fence: appends to one task serialise here, across nodes. */
const LOCK_HEAD: Sql = (t) => `
SELECT status, ${HEAD_COLUMNS} FROM ${t.tasks}
WHERE id = $1 AND lease_owner = $2 AND epoch = $3
FOR UPDATE`;

const INSERT_LINES: Sql = (t) => `
INSERT INTO ${t.logs} (task_id, seq, epoch, at, stream, text, fields, bytes)
SELECT $1, line.seq, $2, $3, line.stream, line.text, line.fields, line.bytes
FROM unnest($4::bigint[], $5::text[], $6::text[], $7::jsonb[], $8::int[]) AS line (seq, stream, text, fields, bytes)`;

const OLDEST: Sql = (t) => `SELECT seq::float8 AS seq, bytes FROM ${t.logs} WHERE task_id = $1 ORDER BY seq LIMIT $2`;

const TRIM: Sql = (t) => `DELETE FROM ${t.logs} WHERE task_id = $1 AND seq <= $2`;

const SET_HEAD: Sql = (t) => `
UPDATE ${t.tasks} SET log_seq = $2, log_lines = $3, log_bytes = $4, log_dropped = $5 WHERE id = $1`;

/** Fenced (S3) and live-only (S2), one transaction: lines, trim and counters commit together. */
export function appendLog(
  db: Db,
  fence: Fence,
  lines: readonly NewLogLine[],
  bound: LogBound,
  now: number,
  skipped = 0,
  eventBound?: AppendBound,
): Promise<LogLine[]> {
  return db.transaction('appendLog', async (tx) => {
    const head = (await tx.query<LogHead>(LOCK_HEAD, [fence.taskId, fence.workerId, fence.epoch])).rows[0];
    if (head === undefined) throw leaseLost(fence.taskId, fence.epoch);
    if (isTerminal(head.status)) {
      throw new TerminusError('already_terminal', `task ${fence.taskId} is ${head.status}`, {
        details: { taskId: fence.taskId, status: head.status },
      });
    }
    let { log_seq: seq, log_lines: kept, log_bytes: bytes, log_dropped: dropped } = head;
    seq += skipped;
    dropped += skipped;
    const stored = lines.map((input): LogLine => ({ ...input, seq: ++seq, epoch: fence.epoch, at: now }));
    const sizes = stored.map(logLineBytes);
    await tx.query(INSERT_LINES, [
      fence.taskId,
      fence.epoch,
      now,
      stored.map((l) => l.seq),
      stored.map((l) => l.stream),
      stored.map((l) => l.text),
      stored.map((l) => json(l.fields)),
      sizes,
    ]);
    kept += stored.length;
    bytes += sizes.reduce((a, b) => a + b, 0);
    if (kept > bound.maxLines || bytes > bound.maxBytes) {
      // At most `kept` rows to look at; in steady state (one line in, one out) the first suffices.
      const oldest = (await tx.query<{ seq: number; bytes: number }>(OLDEST, [fence.taskId, kept])).rows;
      let upTo = 0;
      for (const row of oldest) {
        if (kept <= bound.maxLines && bytes <= bound.maxBytes) break;
        upTo = row.seq;
        kept -= 1;
        bytes -= row.bytes;
        dropped += 1;
      }
      await tx.query(TRIM, [fence.taskId, upTo]);
    }
    await tx.query(SET_HEAD, [fence.taskId, seq, kept, bytes, dropped]);
    const events = stored.map((line) => ({ kind: 'log', logSeq: line.seq, stream: line.stream }) as const);
    if (events.length > 0) await appendEvents(tx, fence.taskId, events, now, eventBound);
    return stored;
  });
}

const VISIBLE: Sql = (t) => `
SELECT ${TASK_COLUMNS}, log_seq::float8, log_dropped::float8 FROM ${t.tasks}
WHERE id = $1 AND owner = $2 AND (expires_at IS NULL OR expires_at > $3)`;

const LINES: Sql = (t) => `
SELECT seq::float8 AS seq, epoch, at::float8 AS at, stream, text, fields FROM ${t.logs}
WHERE task_id = $1 AND seq > $2 AND seq <= $3
ORDER BY seq
LIMIT $4`;

interface LogRow {
  seq: number;
  epoch: number;
  at: number;
  stream: string;
  text: string;
  fields: Record<string, unknown> | null;
}

/**
 * The task row first, then its lines up to the seq that row shows (two autocommit reads): a task
 * read as terminal has all its lines written, so `done` is never said before the last line.
 */
export async function readLog(
  db: Db,
  owner: string,
  id: string,
  query: LogQuery,
  now: number,
): Promise<LogRead | null> {
  const row = (await db.query<TaskValues>('readLog', VISIBLE, [id, owner, now], ROWS)).rows[0];
  if (row === undefined) return null;
  const lastSeq = row[TASK_COLUMN_COUNT] as number;
  const dropped = row[TASK_COLUMN_COUNT + 1] as number;
  const params = [id, query.after, lastSeq, clampLimit(query.limit)];
  const rows = (await db.query<LogRow>('readLog', LINES, params)).rows;
  return { task: toRecord(row), lines: rows.map(toLine), lastSeq, dropped };
}

function toLine(row: LogRow): LogLine {
  const base = { seq: row.seq, epoch: row.epoch, at: row.at, stream: row.stream as LogStream, text: row.text };
  return row.fields === null ? base : { ...base, fields: row.fields };
}
