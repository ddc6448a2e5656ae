import { clampLimit } from '../cursor.js';
import { isDroppable, type NewOrderedEvent, type OrderedEvent } from '../../core/task-events.js';
import type { TaskRecord } from '../../core/task.js';
import type { EventQuery, EventRead } from '../port.js';
import { enqueueWebhooks } from './outbox.js';
import { copy, put, visible, type MemoryEvent, type MemoryState } from './state.js';

/**
 * Numbers `events` from the task's last seq + 1 and stores them with the task's new `eventSeq`, in
 * the same synchronous step as the write they record (no other write interleaves). Returns the task.
 * The task keeps its newest `state.eventBound.maxKept` progress and log events: older ones are
 * removed, their seqs stay used (as the SQL stores do).
 */
export function appendEvents(
  state: MemoryState,
  task: TaskRecord,
  events: readonly NewOrderedEvent[],
  now: number,
): TaskRecord {
  if (events.length === 0) return put(state, task);
  const list = state.events.get(task.id) ?? [];
  state.events.set(task.id, list);
  let seq = state.tasks.get(task.id)?.eventSeq ?? 0;
  for (const event of events) {
    list.push({ ...copy(event), seq: ++seq, at: now });
    if (event.kind === 'status') {
      enqueueWebhooks(state, task, state.webhooks.get(task.id), seq, event.status, event.statusMessage, now);
    }
  }
  trim(state, list);
  return put(state, { ...task, eventSeq: seq });
}

function trim(state: MemoryState, list: MemoryEvent[]): void {
  const { maxKept, onDropped } = state.eventBound;
  if (list.length <= maxKept) return;
  let excess = list.filter((event) => isDroppable(event.kind)).length - maxKept;
  if (excess <= 0) return;
  onDropped?.(excess);
  for (let i = 0; i < list.length && excess > 0;) {
    if (isDroppable((list[i] as MemoryEvent).kind)) {
      list.splice(i, 1);
      excess -= 1;
    } else i += 1;
  }
}

/** The task (S7, S8) and its events after `query.after`, oldest first, up to the seq the task shows. */
export function readEvents(
  state: MemoryState,
  owner: string,
  id: string,
  query: EventQuery,
  now: number,
): EventRead | null {
  const task = visible(state, owner, id, now);
  if (task === null) return null;
  const lines = state.logs.get(id)?.lines ?? [];
  const events = (state.events.get(id) ?? [])
    .filter((event) => event.seq > query.after)
    .slice(0, clampLimit(query.limit))
    .map((event): OrderedEvent => {
      if (event.kind !== 'log') return event;
      const line = lines.find(({ line: l }) => l.seq === event.logSeq)?.line ?? null;
      return { ...event, line };
    });
  return { task: copy(task), events: copy(events), lastSeq: task.eventSeq };
}
