import type { Database } from 'better-sqlite3';
import { expiresAt, isTerminal, type LateOutcome, type TaskRecord } from '../../core/task.js';
import type { Fence, FinishInput, FinishOutcome } from '../port.js';
import { statusChange } from '../../core/task-events.js';
import { withEvents } from './event-append.js';
import { FENCE, fenceParams, noRowUpdated, selectFenced } from './fence.js';
import { json, LIVE, TERMINAL, TASK_COLUMNS, taskStatement, toRecord, type TaskValues } from './row.js';

const RECORD_TERMINAL = `
UPDATE tasks
SET status = @status, status_message = @statusMessage, result = @result, result_digest = @resultDigest,
    error = @error, input_requests = '{}', terminal_at = @now, updated_at = @now, expires_at = @expiresAt,
    lease_owner = NULL, lease_expires_at = NULL
WHERE ${FENCE} AND status IN ${LIVE}
RETURNING ${TASK_COLUMNS}`;

const RECORD_LATE = `
UPDATE tasks SET late_outcome = @late, lease_owner = NULL, lease_expires_at = NULL
WHERE ${FENCE} AND status IN ${TERMINAL}
RETURNING ${TASK_COLUMNS}`;

/**
 * A queued, fenced terminal write. Both UPDATEs are conditional on the status they expect, so the
 * store, not the caller, keeps terminal statuses final (S2); a cancel that won keeps the handler's
 * outcome only as `late_outcome` (S4). The lease is released either way.
 */
export function finish(db: Database, fence: Fence, outcome: FinishInput, now: number): FinishOutcome {
  const task = selectFenced(db, fence);
  if (isTerminal(task.status)) {
    const late: LateOutcome =
      outcome.status === 'completed'
        ? { epoch: fence.epoch, at: now, result: outcome.result }
        : { epoch: fence.epoch, at: now, error: outcome.error };
    const row = taskStatement(db, RECORD_LATE).get({ ...fenceParams(fence), late: json(late) }) as
      TaskValues | undefined;
    return row === undefined ? noRowUpdated(db, fence) : { outcome: 'late', task: toRecord(row), late };
  }
  const done: TaskRecord =
    outcome.status === 'completed'
      ? { ...task, status: 'completed', result: outcome.result, resultDigest: outcome.resultDigest }
      : { ...task, status: 'failed', error: outcome.error, statusMessage: outcome.statusMessage ?? task.statusMessage };
  const row = taskStatement(db, RECORD_TERMINAL).get({
    ...fenceParams(fence),
    status: done.status,
    statusMessage: done.statusMessage,
    result: json(done.result),
    resultDigest: done.resultDigest,
    error: json(done.error),
    now,
    expiresAt: expiresAt({ ...done, terminalAt: now }),
  }) as TaskValues | undefined;
  if (row === undefined) return noRowUpdated(db, fence);
  const recorded = toRecord(row);
  return { outcome: 'recorded', task: withEvents(db, recorded, statusChange(task.status, recorded), now) };
}
