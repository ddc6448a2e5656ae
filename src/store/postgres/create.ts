import { taskNotFound, TerminusError } from '../../core/errors.js';
import { isExpired, type TaskRecord } from '../../core/task.js';
import type { BatchOutcome } from '../../sql/pg-batch.js';
import type { CreateOutcome, KeyLookup, NewTask } from '../port.js';
import type { Db, Sql, Tx } from './db.js';
import { json, ROWS, TASK_COLUMN_COUNT, TASK_COLUMNS, taskColumnsOf, toRecord, type TaskValues } from './row.js';

/**
 * Creates a batch of tasks in ONE statement (one round trip, one commit: `createBatcher` gathers
 * the creates of one event-loop turn). Per row:
 * - no submission key: the task is inserted;
 * - a key no one used: the key row (`claimed`) and the task are inserted together, atomically;
 * - a key already used or burned before this statement began: nothing is written, and the key's
 *   task (or its absence) comes back, for the checks of `existingForKey` (S5, S6).
 * A key that a concurrent create committed while this statement waited on its row lock is not in
 * this statement's snapshot: that row comes back with neither, and `createTasks` runs it again
 * alone (`createAlone`, two statements in one transaction), as it does for two rows of one batch
 * that share a key. A task created leased is the first claim, in the same commit (NewTask.lease):
 * epoch 1.
 */
const CREATE_BATCH: Sql = (t) => `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
    ord int, id text, owner text, tool text, args jsonb, request_digest text, submission_key text,
    wire text, status_message text, now bigint, ttl_ms bigint, poll_interval_ms bigint,
    keep_alive_ms bigint, lease_owner text, lease_expires_at bigint, epoch int)
), claimed AS (
  INSERT INTO ${t.keys} (owner, submission_key, task_id, created_at)
  SELECT owner, submission_key, id, now FROM input WHERE submission_key IS NOT NULL
  ON CONFLICT (owner, submission_key) DO NOTHING
  RETURNING task_id
), inserted AS (
  INSERT INTO ${t.tasks} (id, owner, tool, args, request_digest, submission_key, wire, status, status_message,
                          created_at, updated_at, ttl_ms, poll_interval_ms, keep_alive_ms,
                          lease_owner, lease_expires_at, epoch)
  SELECT id, owner, tool, args, request_digest, submission_key, wire, 'working', status_message,
         now, now, ttl_ms, poll_interval_ms, keep_alive_ms, lease_owner, lease_expires_at, epoch
  FROM input
  WHERE submission_key IS NULL OR id IN (SELECT task_id FROM claimed)
  RETURNING ${TASK_COLUMNS}
)
SELECT ${taskColumnsOf('inserted')}, input.ord, true AS created, NULL::text AS key_task_id
FROM inserted JOIN input ON input.id = inserted.id
UNION ALL
SELECT ${taskColumnsOf('task')}, input.ord, false, used.task_id
FROM input
JOIN ${t.keys} AS used ON used.owner = input.owner AND used.submission_key = input.submission_key
LEFT JOIN ${t.tasks} AS task ON task.id = used.task_id
WHERE input.submission_key IS NOT NULL AND input.id NOT IN (SELECT task_id FROM claimed)`;

const ORD = TASK_COLUMN_COUNT;
const CREATED = TASK_COLUMN_COUNT + 1;
const KEY_TASK = TASK_COLUMN_COUNT + 2;

function row(input: NewTask, ord: number): Record<string, unknown> {
  return {
    ord,
    id: input.id,
    owner: input.owner,
    tool: input.tool,
    args: input.args,
    request_digest: input.requestDigest,
    submission_key: input.submissionKey,
    wire: input.wire,
    status_message: input.statusMessage ?? null,
    now: input.now,
    ttl_ms: input.ttlMs,
    poll_interval_ms: input.pollIntervalMs,
    keep_alive_ms: input.keepAliveMs,
    lease_owner: input.lease?.workerId ?? null,
    lease_expires_at: input.lease === undefined ? null : input.now + input.lease.leaseMs,
    epoch: input.lease === undefined ? 0 : 1,
  };
}

/** The batch statement, then each row's outcome; unresolved rows (see `CREATE_BATCH`) run alone. */
export async function createTasks(db: Db, inputs: readonly NewTask[]): Promise<BatchOutcome<CreateOutcome>[]> {
  const document = JSON.stringify(inputs.map(row));
  const rows = (await db.query<TaskValues>('create', CREATE_BATCH, [document], ROWS)).rows;
  const byOrd = new Map(rows.map((r) => [r[ORD] as number, r]));
  return Promise.all(
    inputs.map(async (input, ord): Promise<BatchOutcome<CreateOutcome>> => {
      const found = byOrd.get(ord);
      try {
        if (found === undefined) return { ok: true, value: await createAlone(db, input) };
        if (found[CREATED] === true) return { ok: true, value: { created: true, task: toRecord(found) } };
        const keyTask = found[KEY_TASK] as string | null;
        const task = found[0] === null ? null : toRecord(found);
        return { ok: true, value: { created: false, task: existingForKey(keyTask, task, input) } };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );
}

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

const SELECT_TASK: Sql = (t) => `SELECT ${TASK_COLUMNS} FROM ${t.tasks} WHERE id = $1`;

const INSERT_TASK: Sql = (t) => `
INSERT INTO ${t.tasks} (id, owner, tool, args, request_digest, submission_key, wire, status, status_message,
                        created_at, updated_at, ttl_ms, poll_interval_ms, keep_alive_ms,
                        lease_owner, lease_expires_at, epoch)
VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, 'working', $8, $9, $9, $10, $11, $12, $13, $14, $15)
ON CONFLICT (id) DO NOTHING
RETURNING ${TASK_COLUMNS}`;

/**
 * One create on its own, in one transaction: the key row and the task row commit together or not
 * at all (S1, S5). The path of a batch the server refused as a whole, and of a row whose key
 * another create committed while the batch waited for it.
 */
export function createAlone(db: Db, input: NewTask): Promise<CreateOutcome> {
  return db.transaction('create', async (tx) => {
    if (input.submissionKey !== null) {
      const claimed = await tx.query(INSERT_KEY, [input.owner, input.submissionKey, input.id, input.now]);
      if (claimed.rowCount === 0) {
        const used = await tx.query<{ task_id: string | null }>(SELECT_KEY, [input.owner, input.submissionKey]);
        const taskId = used.rows[0]?.task_id ?? null;
        return { created: false, task: existingForKey(taskId, await taskOf(tx, taskId), input) };
      }
    }
    const inserted = await tx.query<TaskValues>(
      INSERT_TASK,
      [
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
        input.lease?.workerId ?? null,
        input.lease === undefined ? null : input.now + input.lease.leaseMs,
        input.lease === undefined ? 0 : 1,
      ],
      ROWS,
    );
    const created = inserted.rows[0];
    if (created === undefined) throw new TerminusError('invalid_argument', `task id ${input.id} already exists`);
    return { created: true, task: toRecord(created) };
  });
}

async function taskOf(tx: Tx, taskId: string | null): Promise<TaskRecord | null> {
  if (taskId === null) return null;
  const found = (await tx.query<TaskValues>(SELECT_TASK, [taskId], ROWS)).rows[0];
  return found === undefined ? null : toRecord(found);
}

/** Same key: same digest gives the task back (S5); a burned or spent key is refused (S6). */
function existingForKey(taskId: string | null, task: TaskRecord | null, input: NewTask): TaskRecord {
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
  const found = (await db.query<TaskValues>('lookupKey', SELECT_TASK, [taskId], ROWS)).rows[0];
  if (found === undefined) throw taskNotFound();
  const task = toRecord(found);
  if (isExpired(task, now)) throw taskNotFound();
  return { kind: 'found', task };
}
