import { TerminusError, taskNotFound } from '../core/errors.js';
import { DEFAULT_LOG_READ, MAX_LOG_READ } from '../core/log.js';
import { isTerminal } from '../core/task.js';
import type { Clock } from '../core/ports.js';
import type { TaskStore } from '../store/port.js';
import type { LogReadQuery, TaskLogPage } from './engine-port.js';

/**
 * `engine.readLog`: checks the cursor and the limit (`invalid_argument` naming the bad one), reads
 * one page, and says where the reader stands: `next` is the seq to pass as `after` next time, and
 * `done` is true once the task is terminal and nothing is left after `next` (a terminal task takes
 * no more lines, so a reader may stop then).
 */
export async function readTaskLog(
  deps: { readonly store: TaskStore; readonly clock: Clock },
  owner: string,
  id: string,
  query: LogReadQuery,
): Promise<TaskLogPage> {
  const after = query.after ?? 0;
  const limit = query.limit ?? DEFAULT_LOG_READ;
  if (!Number.isSafeInteger(after) || after < 0) {
    throw invalid(
      `after must be a non-negative integer (a seq from an earlier read, 0 for the start), got ${String(after)}`,
      'after',
    );
  }
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LOG_READ) {
    throw invalid(`limit must be an integer from 1 to ${MAX_LOG_READ}, got ${String(limit)}`, 'limit');
  }
  const read = await deps.store.readLog(owner, id, { after, limit }, deps.clock.now());
  if (read === null) throw taskNotFound();
  const next = read.lines.at(-1)?.seq ?? after;
  return {
    task: read.task,
    lines: read.lines,
    next,
    dropped: read.dropped,
    lastSeq: read.lastSeq,
    done: isTerminal(read.task.status) && next >= read.lastSeq,
  };
}

function invalid(message: string, field: string): TerminusError {
  return new TerminusError('invalid_argument', message, { details: { field } });
}
