import type { Database } from 'better-sqlite3';
import { SqliteError } from 'better-sqlite3';
import { TerminusError } from '../../core/errors.js';
import { isExpired, type TaskRecord } from '../../core/task.js';
import { tooManyLive } from '../live-cap.js';
import type { CreateOutcome, NewTask } from '../port.js';
import { json, TASK_COLUMNS, taskStatement, toRecord, type TaskValues } from './row.js';
import { withEvents } from './event-append.js';
import { insertKey, selectKey, selectTask } from './keys.js';
import { countLive } from './sweep.js';

const INSERT_TASK = `
INSERT INTO tasks (id, owner, tool, args, request_digest, submission_key, wire, status, status_message,
                   created_at, updated_at, ttl_ms, poll_interval_ms, keep_alive_ms,
                   lease_owner, lease_expires_at, epoch, webhooks)
VALUES (@id, @owner, @tool, @args, @requestDigest, @submissionKey, @wire, 'working', @statusMessage,
        @now, @now, @ttlMs, @pollIntervalMs, @keepAliveMs, @leaseOwner, @leaseExpiresAt, @epoch, @webhooks)
RETURNING ${TASK_COLUMNS}`;

function insertTask(db: Database, input: NewTask): TaskRecord {
  try {
    const { lease, webhooks, maxLive: _maxLive, ...fields } = input;
    const row = taskStatement(db, INSERT_TASK).get({
      ...fields,
      args: json(input.args) ?? '{}',
      statusMessage: input.statusMessage ?? null,
      // Created leased is the first claim, in the same commit (NewTask.lease): epoch 1.
      leaseOwner: lease?.workerId ?? null,
      leaseExpiresAt: lease === undefined ? null : input.now + lease.leaseMs,
      epoch: lease === undefined ? 0 : 1,
      webhooks: webhooks === undefined || webhooks.length === 0 ? null : JSON.stringify(webhooks),
    }) as TaskValues;
    const task = toRecord(row);
    return withEvents(db, task, [{ kind: 'status', status: 'working', statusMessage: task.statusMessage }], input.now);
  } catch (error) {
    if (error instanceof SqliteError && error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      throw new TerminusError('invalid_argument', `task id ${input.id} already exists`, { cause: error });
    }
    throw error;
  }
}

/** Runs inside a group-commit savepoint; a throw rolls back this create only. */
export function createTask(db: Database, input: NewTask): CreateOutcome {
  if (input.submissionKey !== null) {
    const used = selectKey(db, input.owner, input.submissionKey);
    if (used !== undefined) return { created: false, task: existingForKey(db, used.task_id, input) };
  }
  // In the batch's transaction: the creates of one group commit count one another (T-79).
  if (input.maxLive !== undefined) {
    const live = countLive(db, input.owner);
    if (live >= input.maxLive) throw tooManyLive(input.maxLive, live);
  }
  const task = insertTask(db, input);
  if (input.submissionKey !== null) insertKey(db, input.owner, input.submissionKey, input.id, input.now);
  return { created: true, task };
}

/** Same key: same digest gives the task back (S5); a burned or spent key is refused (S6). */
function existingForKey(db: Database, taskId: string | null, input: NewTask): TaskRecord {
  const task = taskId === null ? null : selectTask(db, taskId);
  if (task === null || isExpired(task, input.now)) {
    const reason = taskId === null ? 'looked_up' : 'expired';
    throw new TerminusError('submission_key_burned', `submission key is spent (${reason})`, {
      details: { submissionKey: input.submissionKey, reason },
    });
  }
  if (task.requestDigest !== input.requestDigest) {
    throw new TerminusError('submission_key_conflict', 'submission key was used for a different request', {
      details: { submissionKey: input.submissionKey, taskId: task.id },
    });
  }
  return task;
}
