import { taskNotFound } from '../../core/errors.js';
import { isExpired, isTerminal, type TaskRecord } from '../../core/task.js';
import type { CancelOutcome, ListQuery, TaskCount, TaskPage } from '../port.js';
import { clampLimit, decodeCursor, encodeCursor, newerThan } from '../cursor.js';
import { statusChange } from '../../core/task-events.js';
import { appendEvents } from './events.js';
import { copy, visible, type MemoryState } from './state.js';

export function get(state: MemoryState, owner: string, id: string, now: number): TaskRecord | null {
  const task = visible(state, owner, id, now);
  return task === null ? null : copy(task);
}

/** `owner` null: every owner's (the operator's list). */
export function list(state: MemoryState, owner: string | null, query: ListQuery, now: number): TaskPage {
  const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
  const limit = clampLimit(query.limit);
  const matching = [...state.tasks.values()]
    .filter((t) => (owner === null || t.owner === owner) && !isExpired(t, now))
    .filter((t) => query.status === undefined || query.status.includes(t.status))
    .filter((t) => query.wire === undefined || t.wire === query.wire)
    .filter((t) => after === null || newerThan(after, t))
    .sort((a, b) => (newerThan(a, b) ? -1 : 1));
  const tasks = matching.slice(0, limit);
  const last = tasks.at(-1);
  const nextCursor = matching.length > limit && last !== undefined ? encodeCursor(last) : null;
  return { tasks: tasks.map((t) => copy(t)), nextCursor };
}

/** A cancel that wins is final (S4); the lease stays so the worker learns of it by heartbeat. */
export function cancel(state: MemoryState, owner: string, id: string, now: number): CancelOutcome {
  const task = visible(state, owner, id, now);
  if (task === null) throw taskNotFound();
  if (isTerminal(task.status)) return { outcome: 'already_terminal', task: copy(task) };
  const cancelled: TaskRecord = {
    ...task,
    status: 'cancelled',
    statusMessage: 'Cancelled by request',
    cancelRequested: true,
    inputRequests: {},
    terminalAt: now,
    updatedAt: now,
  };
  return { outcome: 'cancelled', task: appendEvents(state, cancelled, statusChange(task.status, cancelled), now) };
}

/** Only outstanding keys are answered; back to `working` once none is left. */
export function respond(
  state: MemoryState,
  owner: string,
  id: string,
  responses: Readonly<Record<string, unknown>>,
  now: number,
): TaskRecord {
  const task = visible(state, owner, id, now);
  if (task === null) throw taskNotFound();
  const answered = Object.keys(responses).filter((key) => Object.hasOwn(task.inputRequests, key));
  if (answered.length === 0) return copy(task);
  const inputRequests = { ...task.inputRequests };
  const inputResponses = { ...task.inputResponses };
  for (const key of answered) {
    delete inputRequests[key];
    inputResponses[key] = responses[key] ?? null;
  }
  const stillWaiting = Object.keys(inputRequests).length > 0;
  const status = task.status === 'input_required' && !stillWaiting ? 'working' : task.status;
  const changed = { ...task, inputRequests, inputResponses, status, updatedAt: now };
  const events = [{ kind: 'input_answered', keys: answered } as const, ...statusChange(task.status, changed)];
  return appendEvents(state, changed, events, now);
}

/** Unexpired tasks by tool and status. */
export function countByStatus(state: MemoryState, now: number): TaskCount[] {
  const counts = new Map<string, TaskCount>();
  for (const t of state.tasks.values()) {
    if (isExpired(t, now)) continue;
    const key = JSON.stringify([t.tool, t.status]);
    counts.set(key, { tool: t.tool, status: t.status, count: (counts.get(key)?.count ?? 0) + 1 });
  }
  return [...counts.values()];
}
