import { taskNotFound } from '../../core/errors.js';
import type { TaskRecord } from '../../core/task.js';
import type { CancelOutcome } from '../port.js';
import type { Db, Sql } from './db.js';
import { getTask } from './read.js';
import { statusChange } from '../../core/task-events.js';
import { withEvents } from './event-append.js';
import { json, LIVE, ROWS, TASK_COLUMNS, toRecord, type TaskValues } from './row.js';

/**
 * Conditional on a live status, so a cancel never overwrites a terminal task (S2) and, of a cancel
 * and a finish racing, exactly one wins on the row lock. The lease is kept so the worker learns of
 * the cancel by heartbeat (S4).
 */
const CANCEL: Sql = (t) => `
UPDATE ${t.tasks}
SET status = 'cancelled', status_message = 'Cancelled by request', cancel_requested = true,
    input_requests = '{}', terminal_at = $3, updated_at = $3
WHERE id = $1 AND owner = $2 AND status IN ${LIVE}
RETURNING ${TASK_COLUMNS}`;

/** The cancel and its status event, in one transaction. */
export async function cancelTask(db: Db, owner: string, id: string, now: number): Promise<CancelOutcome> {
  const won = await db.transaction('cancel', async (tx) => {
    const row = (await tx.query<TaskValues>(CANCEL, [id, owner, now], ROWS)).rows[0];
    if (row === undefined) return null;
    const task = toRecord(row);
    return withEvents(tx, task, statusChange('working', task), now);
  });
  if (won !== null) return { outcome: 'cancelled', task: won };
  // Zero rows: unknown, foreign, or terminal (a terminal status never becomes live again).
  const task = await getTask(db, owner, id, now);
  if (task === null) throw taskNotFound();
  return { outcome: 'already_terminal', task };
}

const SELECT_FOR_RESPOND: Sql = (t) => `
SELECT ${TASK_COLUMNS} FROM ${t.tasks}
WHERE id = $1 AND owner = $2 AND (expires_at IS NULL OR expires_at > $3)
FOR UPDATE`;

const RESPOND: Sql = (t) => `
UPDATE ${t.tasks}
SET input_requests = $2::jsonb, input_responses = $3::jsonb, status = $4, updated_at = $5
WHERE id = $1
RETURNING ${TASK_COLUMNS}`;

/**
 * Only outstanding keys are answered; back to `working` once none is left. The row is locked
 * first, so two nodes answering the same key at once record the first answer, not the last.
 */
export function respondTask(
  db: Db,
  owner: string,
  id: string,
  responses: Readonly<Record<string, unknown>>,
  now: number,
): Promise<TaskRecord> {
  return db.transaction('respond', async (tx) => {
    const row = (await tx.query<TaskValues>(SELECT_FOR_RESPOND, [id, owner, now], ROWS)).rows[0];
    if (row === undefined) throw taskNotFound();
    const task = toRecord(row);
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
    const params = [id, json(inputRequests), json(inputResponses), status, now];
    const updated = await tx.query<TaskValues>(RESPOND, params, ROWS);
    const stored = toRecord(updated.rows[0] as TaskValues);
    const events = [{ kind: 'input_answered', keys: answered } as const, ...statusChange(task.status, stored)];
    return withEvents(tx, stored, events, now);
  });
}
