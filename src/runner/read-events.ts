import { decodeEventCursor, encodeEventCursor } from '../core/event-cursor.js';
import { TerminusError, taskNotFound } from '../core/errors.js';
import { DEFAULT_EVENT_READ, MAX_EVENT_READ } from '../core/task-events.js';
import { isTerminal } from '../core/task.js';
import type { Clock } from '../core/ports.js';
import type { TaskStore } from '../store/port.js';
import type { EventReadQuery, TaskEventPage } from './engine-port.js';

/**
 * `engine.readEvents`: checks the cursor and the limit, reads one page and says where the reader
 * stands. The order of the checks keeps S8: a malformed cursor is refused before anything is read
 * (it says nothing about any task); an unknown or foreign task is `not_found` before its cursor is
 * looked at; only then is a cursor of another task, or one ahead of the task's last event, refused.
 * Every refusal is `invalid_argument` naming the field, and nothing is read or written for it.
 */
export async function readTaskEvents(
  deps: { readonly store: TaskStore; readonly clock: Pick<Clock, 'now'> },
  owner: string,
  id: string,
  query: EventReadQuery,
): Promise<TaskEventPage> {
  const cursor = query.cursor === undefined ? null : decodeEventCursor(query.cursor);
  const limit = query.limit ?? DEFAULT_EVENT_READ;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_EVENT_READ) {
    throw invalid(`limit must be an integer from 1 to ${MAX_EVENT_READ}, got ${String(limit)}`, 'limit');
  }
  const after = cursor?.seq ?? 0;
  const read = await deps.store.readEvents(owner, id, { after, limit }, deps.clock.now());
  if (read === null) throw taskNotFound();
  if (cursor !== null && !cursor.belongsTo(id)) {
    throw invalid('cursor belongs to another task: a cursor is good only for the task whose events gave it', 'cursor');
  }
  if (after > read.lastSeq) {
    throw invalid(`cursor is ahead of the task: it stands after event ${after}, the last is ${read.lastSeq}`, 'cursor');
  }
  // A page shorter than the limit holds every kept event up to `lastSeq`: the reader stands there,
  // and the seqs it passed without an event are ones the per-task bound dropped. A full page stands
  // at its last event. Either way each seq in (after, next] is an event here or counted in `skipped`.
  const full = read.events.length >= limit;
  const next = full ? (read.events.at(-1)?.seq ?? after) : Math.max(after, read.lastSeq);
  return {
    task: read.task,
    events: read.events,
    next,
    cursor: encodeEventCursor(id, next),
    lastSeq: read.lastSeq,
    skipped: next - after - read.events.length,
    done: isTerminal(read.task.status) && next >= read.lastSeq,
  };
}

function invalid(message: string, field: string): TerminusError {
  return new TerminusError('invalid_argument', message, { details: { field } });
}
