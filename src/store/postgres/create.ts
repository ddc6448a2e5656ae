import { taskNotFound, TerminusError } from '../../core/errors.js';
import { isExpired, type TaskRecord } from '../../core/task.js';
import type { CreateOutcome, KeyLookup, NewTask } from '../port.js';
import type { Db, Sql, Tx } from './db.js';
import { withEvents } from './event-append.js';
import { json, toRecord, type TaskRow } from './row.js';

/**
 * Claims `(owner, key)` for a task id, or for nobody (`task_id` NULL: burned by `lookupKey`, S6).
 * Two nodes racing here meet on the primary key: the second INSERT waits for the first
 * transaction and, once it commits, does nothing; its next statement (a fresh READ COMMITTED
 * snapshot) then reads the winner's row. No SERIALIZABLE needed: the unique index is the lock.
 */
const INSERT_KEY: Sql = (t) => `
INSERT INTO ${t.keys} (owner, submission_key, task_id, created_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (owner, submission_key) DO NOTHING`;

const SELECT_KEY: Sql = (t) => `SELECT task_id FROM ${t.keys} WHERE owner = $1 AND submission_key = $2`;

const SELECT_TASK: Sql = (t) => `SELECT * FROM ${t.tasks} WHERE id = $1`;

const INSERT_TASK: Sql = (t) => `
INSERT INTO ${t.tasks} (id, owner, tool, args, request_digest, submission_key, wire, status, status_message,
                        created_at, updated_at, ttl_ms, poll_interval_ms, keep_alive_ms,
                        lease_owner, lease_expires_at, epoch, webhooks)
VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, 'working', $8, $9, $9, $10, $11, $12, $13, $14, $15, $16::jsonb)
ON CONFLICT (id) DO NOTHING
RETURNING *`;

/** One transaction: the key row and the task row commit together or not at all (S1, S5). */
export function createTask(db: Db, input: NewTask): Promise<CreateOutcome> {
  return db.transaction('create', async (tx) => {
    if (input.submissionKey !== null) {
      const claimed = await tx.query(INSERT_KEY, [input.owner, input.submissionKey, input.id, input.now]);
      if (claimed.rowCount === 0) {
        const used = await tx.query<{ task_id: string | null }>(SELECT_KEY, [input.owner, input.submissionKey]);
        const taskId = used.rows[0]?.task_id ?? null;
        return { created: false, task: await existingForKey(tx, taskId, input) };
      }
    }
    const inserted = await tx.query<TaskRow>(INSERT_TASK, [
      input.id,
      input.owner,
      input.tool,
      json(input.args) ?? '{}',
      input.requestDigest,
      input.submissionKey,
      input.wire,
      input.statusMessage ?? null,
      input.now,
      input.ttlMs,
      input.pollIntervalMs,
      input.keepAliveMs,
      // Created leased is the first claim, in the same commit (NewTask.lease): epoch 1.
      input.lease?.workerId ?? null,
      input.lease === undefined ? null : input.now + input.lease.leaseMs,
      input.lease === undefined ? 0 : 1,
      input.webhooks === undefined || input.webhooks.length === 0 ? null : JSON.stringify(input.webhooks),
    ]);
    const row = inserted.rows[0];
    if (row === undefined) throw new TerminusError('invalid_argument', `task id ${input.id} already exists`);
    const task = toRecord(row);
    const first = [{ kind: 'status', status: 'working', statusMessage: task.statusMessage } as const];
    return { created: true, task: await withEvents(tx, task, first, input.now) };
  });
}

/** Same key: same digest gives the task back (S5); a burned or spent key is refused (S6). */
async function existingForKey(tx: Tx, taskId: string | null, input: NewTask): Promise<TaskRecord> {
  const row = taskId === null ? undefined : (await tx.query<TaskRow>(SELECT_TASK, [taskId])).rows[0];
  const task = row === undefined ? null : toRecord(row);
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

/**
 * `never_created` burns the key in the same statement that finds it unused (S6): the INSERT either
 * writes the tombstone or conflicts with the row of a create, committed before we read it. A key
 * whose task has expired or been swept rejects `not_found`: "never created" would be a lie.
 */
export async function lookupKey(db: Db, owner: string, submissionKey: string, now: number): Promise<KeyLookup> {
  const burned = await db.query('lookupKey', INSERT_KEY, [owner, submissionKey, null, now]);
  if (burned.rowCount === 1) return { kind: 'never_created' };
  const used = await db.query<{ task_id: string | null }>('lookupKey', SELECT_KEY, [owner, submissionKey]);
  const taskId = used.rows[0]?.task_id ?? null;
  if (taskId === null) return { kind: 'never_created' };
  const row = (await db.query<TaskRow>('lookupKey', SELECT_TASK, [taskId])).rows[0];
  if (row === undefined) throw taskNotFound();
  const task = toRecord(row);
  if (isExpired(task, now)) throw taskNotFound();
  return { kind: 'found', task };
}
