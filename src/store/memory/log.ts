import { logLineBytes, type LogBound, type LogLine, type NewLogLine } from '../../core/log.js';
import type { Fence, LogQuery, LogRead } from '../port.js';
import { clampLimit } from '../cursor.js';
import { appendEvents } from './events.js';
import { assertLive, copy, fenced, visible, type MemoryState } from './state.js';

/** Fenced like `progress`; a terminal task's log is final (S2). */
export function appendLog(
  state: MemoryState,
  fence: Fence,
  lines: readonly NewLogLine[],
  bound: LogBound,
  now: number,
  skipped = 0,
): LogLine[] {
  const task = fenced(state, fence);
  assertLive(task);
  const log = state.logs.get(fence.taskId) ?? { lastSeq: 0, dropped: 0, bytes: 0, lines: [] };
  state.logs.set(fence.taskId, log);
  log.lastSeq += skipped;
  log.dropped += skipped;
  const stored = lines.map((input): LogLine => {
    log.lastSeq += 1;
    const line: LogLine = { ...copy(input), seq: log.lastSeq, epoch: fence.epoch, at: now };
    const bytes = logLineBytes(line);
    log.lines.push({ line, bytes });
    log.bytes += bytes;
    return line;
  });
  let trim = 0;
  while (trim < log.lines.length && (log.lines.length - trim > bound.maxLines || log.bytes > bound.maxBytes)) {
    log.bytes -= log.lines[trim]?.bytes ?? 0;
    log.dropped += 1;
    trim += 1;
  }
  if (trim > 0) log.lines.splice(0, trim);
  appendEvents(
    state,
    task,
    stored.map((line) => ({ kind: 'log', logSeq: line.seq, stream: line.stream }) as const),
    now,
  );
  return copy(stored);
}

/** The task (S7, S8) and its lines after the cursor, oldest first. */
export function readLog(state: MemoryState, owner: string, id: string, query: LogQuery, now: number): LogRead | null {
  const task = visible(state, owner, id, now);
  if (task === null) return null;
  const log = state.logs.get(id);
  const lines = (log?.lines ?? [])
    .filter(({ line }) => line.seq > query.after)
    .slice(0, clampLimit(query.limit))
    .map(({ line }) => line);
  return { task: copy(task), lines: copy(lines), lastSeq: log?.lastSeq ?? 0, dropped: log?.dropped ?? 0 };
}
