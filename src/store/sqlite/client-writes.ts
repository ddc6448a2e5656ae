import type { Database } from 'better-sqlite3';
import { taskNotFound } from '../../core/errors.js';
import { expiresAt, isTerminal, type TaskRecord } from '../../core/task.js';
import type { CancelOutcome } from '../port.js';
import { statusChange } from '../../core/task-events.js';
import { withEvents } from './event-append.js';
import { getTask } from './read.js';
import { json, LIVE, TASK_COLUMNS, taskStatement, toRecord, type TaskValues } from './row.js';

const CANCEL = `
UPDATE tasks
SET status = 'cancelled', status_message = @statusMessage, cancel_requested = 1, input_requests = '{}',
    terminal_at = @now, updated_at = @now, expires_at = @expiresAt
WHERE id = @id AND status IN ${LIVE}
RETURNING ${TASK_COLUMNS}`;

/**
 * A queued write. The UPDATE is conditional on a live status, so a cancel can never overwrite a
 * terminal task (S2); the lease is kept so the worker learns of the cancel by heartbeat (S4).
 */
export function cancelTask(db: Database, owner: string, id: string, now: number): CancelOutcome {
  const task = getTask(db, owner, id, now);
  if (task === null) throw taskNotFound();
  if (isTerminal(task.status)) return { outcome: 'already_terminal', task };
  const statusMessage = 'Cancelled by request';
  const cancelled: TaskRecord = { ...task, status: 'cancelled', statusMessage, terminalAt: now, updatedAt: now };
  const row = taskStatement(db, CANCEL).get({ id, now, statusMessage, expiresAt: expiresAt(cancelled) }) as TaskValues;
  const stored = toRecord(row);
  return { outcome: 'cancelled', task: withEvents(db, stored, statusChange(task.status, stored), now) };
}

const RESPOND = `
UPDATE tasks
SET input_requests = @inputRequests, input_responses = @inputResponses, status = @status, updated_at = @now
WHERE id = @id AND status IN ${LIVE}
RETURNING ${TASK_COLUMNS}`;

/** A queued write: only outstanding keys are answered; back to `working` once none is left. */
export function respondTask(
  db: Database,
  owner: string,
  id: string,
  responses: Readonly<Record<string, unknown>>,
  now: number,
): TaskRecord {
  const task = getTask(db, owner, id, now);
  if (task === null) throw taskNotFound();
  const answered = Object.keys(responses).filter((key) => Object.hasOwn(task.inputRequests, key));
  if (answered.length === 0) return task;
  const inputRequests = { ...task.inputRequests };
  const inputResponses = { ...task.inputResponses };
  for (const key of answered) {
    delete inputRequests[key];
    inputResponses[key] = responses[key] ?? null;
  }
  const stillWaiting = Object.keys(inputRequests).length > 0;
  const status = task.status === 'input_required' && !stillWaiting ? 'working' : task.status;
  const row = taskStatement(db, RESPOND).get({
    id,
    now,
    status,
    inputRequests: json(inputRequests),
    inputResponses: json(inputResponses),
  }) as TaskValues;
  const stored = toRecord(row);
  const events = [{ kind: 'input_answered', keys: answered } as const, ...statusChange(task.status, stored)];
  return withEvents(db, stored, events, now);
}
