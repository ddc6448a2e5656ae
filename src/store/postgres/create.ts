import { taskNotFound, TerminusError } from '../../core/errors.js';
import { isExpired, type TaskRecord } from '../../core/task.js';
import type { BatchOutcome } from '../../sql/pg-batch.js';
import type { CreateOutcome, KeyLookup, NewTask } from '../port.js';
import type { Db, Sql, Tx } from './db.js';
import { withEvents } from './event-append.js';
import { tooManyLive } from '../live-cap.js';
import { json, LIVE, ROWS, TASK_COLUMN_COUNT, TASK_COLUMNS, taskColumnsOf, toRecord, type TaskValues } from './row.js';

/**
 * Creates a batch of tasks in ONE statement (one round trip, one commit: `createBatcher` gathers
 * the creates of one event-loop turn). Per row:
 * - the owner's live tasks are counted first when the row carries a cap (`NewTask.maxLive`, T-79;
 *   on the partial index of migration 004, stopping at the cap), in the statement's snapshot;
 * - no submission key: the task is inserted, unless the cap refuses it;
 * - a key no one used: the key row (`claimed`) and the task are inserted together, atomically,
 *   unless the cap refuses it (then neither is);
 * - a key already used or burned before this statement began: nothing is written, and the key's
 *   task (or its absence) comes back, for the checks of `existingForKey` (S5, S6), whatever the cap.
 * A key that a concurrent create committed while this statement waited on its row lock is not in
 * this statement's snapshot: that row comes back with none of the three, and `createTasks` runs it
 * again alone (`createAlone`, in one transaction), as it does for two rows of one batch that share
 * a key. A task created leased is the first claim, in the same commit (NewTask.lease): epoch 1.
 * Each task created gets its first ordered event (status `working`, seq 1, so `event_seq` is
 * inserted as 1) and, for each of its webhooks that takes every status, an outbox row: in the same
 * statement, so in the same commit as the task (issue 32; `appendEvents` writes the same rows for
 * later changes).
 */
const CREATE_BATCH: Sql = (t) => `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
    ord int, id text, owner text, tool text, args jsonb, request_digest text, submission_key text,
    wire text, status_message text, now bigint, ttl_ms bigint, poll_interval_ms bigint,
    keep_alive_ms bigint, lease_owner text, lease_expires_at bigint, epoch int, max_live int, webhooks jsonb)
), counted AS (
  SELECT input.*, (
    SELECT count(*) FROM (
      SELECT 1 FROM ${t.tasks} AS live
      WHERE live.owner = input.owner AND live.status IN ${LIVE}
      LIMIT COALESCE(input.max_live, 0)
    ) AS capped) AS live
  FROM input
), checked AS (
  SELECT counted.*, (counted.max_live IS NULL OR counted.live < counted.max_live) AS allowed FROM counted
), claimed AS (
  INSERT INTO ${t.keys} (owner, submission_key, task_id, created_at)
  SELECT owner, submission_key, id, now FROM checked WHERE submission_key IS NOT NULL AND allowed
  ON CONFLICT (owner, submission_key) DO NOTHING
  RETURNING task_id
), inserted AS (
  INSERT INTO ${t.tasks} (id, owner, tool, args, request_digest, submission_key, wire, status, status_message,
                          created_at, updated_at, ttl_ms, poll_interval_ms, keep_alive_ms,
                          lease_owner, lease_expires_at, epoch, webhooks, event_seq)
  SELECT id, owner, tool, args, request_digest, submission_key, wire, 'working', status_message,
         now, now, ttl_ms, poll_interval_ms, keep_alive_ms, lease_owner, lease_expires_at, epoch, webhooks, 1
  FROM checked
  WHERE allowed AND (submission_key IS NULL OR id IN (SELECT task_id FROM claimed))
  RETURNING ${TASK_COLUMNS}, webhooks
), first_event AS (
  INSERT INTO ${t.events} (task_id, seq, at, kind, data, log_seq)
  SELECT id, 1, created_at, 'status', jsonb_build_object('status', status, 'statusMessage', status_message), NULL
  FROM inserted
), first_outbox AS (
  INSERT INTO ${t.outbox} (task_id, seq, endpoint, owner, tool, url, secret, status, status_message, event_at,
                           state, attempts, next_at, created_at)
  SELECT inserted.id, 1, w.ord, inserted.owner, inserted.tool, w.hook->>'url', w.hook->>'secret', inserted.status,
         inserted.status_message, inserted.created_at, 'pending', 0, inserted.created_at, inserted.created_at
  FROM inserted CROSS JOIN LATERAL jsonb_array_elements(COALESCE(inserted.webhooks, '[]'::jsonb))
       WITH ORDINALITY AS w (hook, ord)
  WHERE w.hook->>'events' = 'all'
)
SELECT ${taskColumnsOf('inserted')}, checked.ord, 'created' AS kind, NULL::text AS key_task_id, NULL::bigint AS live
FROM inserted JOIN checked ON checked.id = inserted.id
UNION ALL
SELECT ${taskColumnsOf('task')}, checked.ord, 'key', used.task_id, NULL
FROM checked
JOIN ${t.keys} AS used ON used.owner = checked.owner AND used.submission_key = checked.submission_key
LEFT JOIN ${t.tasks} AS task ON task.id = used.task_id
WHERE checked.submission_key IS NOT NULL AND checked.id NOT IN (SELECT task_id FROM claimed)
UNION ALL
SELECT ${TASK_COLUMNS_NULL}, checked.ord, 'capped', NULL, checked.live
FROM checked
WHERE NOT checked.allowed AND NOT EXISTS (
  SELECT 1 FROM ${t.keys} AS used WHERE used.owner = checked.owner AND used.submission_key = checked.submission_key)`;

/** As many NULLs as a task has columns: the task part of a row that created nothing. */
const TASK_COLUMNS_NULL = TASK_COLUMNS.split(', ')
  .map(() => 'NULL')
  .join(', ');

const ORD = TASK_COLUMN_COUNT;
const KIND = TASK_COLUMN_COUNT + 1;
const KEY_TASK = TASK_COLUMN_COUNT + 2;
const LIVE_COUNT = TASK_COLUMN_COUNT + 3;

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
    max_live: input.maxLive ?? null,
    webhooks: webhooksOf(input),
  };
}

/** The task's webhooks as stored: null for none. */
function webhooksOf(input: NewTask): readonly unknown[] | null {
  return input.webhooks === undefined || input.webhooks.length === 0 ? null : input.webhooks;
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
        if (found[KIND] === 'created') return { ok: true, value: { created: true, task: toRecord(found) } };
        if (found[KIND] === 'capped') throw tooManyLive(input.maxLive ?? 0, Number(found[LIVE_COUNT]));
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

/** The owner's live tasks, counted up to the cap (T-79). */
const COUNT_LIVE_CAPPED: Sql = (t) => `
SELECT count(*) AS live FROM (SELECT 1 FROM ${t.tasks} WHERE owner = $1 AND status IN ${LIVE} LIMIT $2) AS capped`;

const INSERT_TASK: Sql = (t) => `
INSERT INTO ${t.tasks} (id, owner, tool, args, request_digest, submission_key, wire, status, status_message,
                        created_at, updated_at, ttl_ms, poll_interval_ms, keep_alive_ms,
                        lease_owner, lease_expires_at, epoch, webhooks)
VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, 'working', $8, $9, $9, $10, $11, $12, $13, $14, $15, $16::jsonb)
ON CONFLICT (id) DO NOTHING
RETURNING ${TASK_COLUMNS}`;

/**
 * One create on its own, in one transaction: the key row and the task row commit together or not
 * at all (S1, S5), with the task's first event and outbox rows (`withEvents`). The path of a
 * batch the server refused as a whole, and of a row whose key another create committed while the
 * batch waited for it.
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
    if (input.maxLive !== undefined) {
      const counted = await tx.query<{ live: string }>(COUNT_LIVE_CAPPED, [input.owner, input.maxLive]);
      const live = Number(counted.rows[0]?.live ?? 0);
      // Thrown inside the transaction: the key claimed above rolls back with it.
      if (live >= input.maxLive) throw tooManyLive(input.maxLive, live);
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
        json(webhooksOf(input)),
      ],
      ROWS,
    );
    const created = inserted.rows[0];
    if (created === undefined) throw new TerminusError('invalid_argument', `task id ${input.id} already exists`);
    const task = toRecord(created);
    const first = [{ kind: 'status', status: 'working', statusMessage: task.statusMessage } as const];
    return { created: true, task: await withEvents(tx, task, first, input.now) };
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
