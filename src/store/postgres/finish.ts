import { leaseLost } from '../../core/errors.js';
import type { LateOutcome } from '../../core/task.js';
import type { BatchOutcome } from '../../sql/pg-batch.js';
import type { QueryOptions } from '../../sql/pg-db.js';
import type { Fence, FinishInput, FinishOutcome } from '../port.js';
import type { Sql } from './db.js';
import { LIVE, ROWS, TASK_COLUMN_COUNT, TASK_COLUMNS, taskColumnsOf, toRecord, type TaskValues } from './row.js';

/** A fenced terminal write as `finishTasks` takes it. */
export interface FinishItem {
  readonly fence: Fence;
  readonly outcome: FinishInput;
  readonly now: number;
}

/**
 * Fenced terminal writes (S2, S3, S4), any number in ONE statement: each row is updated only
 * under its fence (`id`, lease owner, epoch), and the row lock decides a race with a cancel. A row
 * still live becomes `completed` / `failed`; a row a cancel made terminal first keeps its status
 * and `updated_at`, and the outcome is kept only as `late_outcome` (S4). The lease is released
 * either way. Under READ COMMITTED a row changed since the snapshot is re-read once locked, so the
 * `CASE`s see the status that won. No row for an item: its fence no longer holds (`lease_lost`).
 * A row that became terminal here gets its status event (`event_seq` + 1 in the same UPDATE, so
 * under the same row lock; a completion's carries the result digest) and, for each of its webhooks, an outbox row (a terminal status is in
 * every endpoint's event set): in the same statement, so in the same commit (issue 32). A late
 * outcome records no event: the status did not change.
 */
const FINISH_BATCH: Sql = (t) => `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
    ord int, id text, worker text, epoch int, status text, result jsonb, result_digest text,
    error jsonb, message text, late jsonb, now bigint)
), done AS (
UPDATE ${t.tasks} AS task SET
  status = CASE WHEN task.status IN ${LIVE} THEN input.status ELSE task.status END,
  result = CASE WHEN task.status IN ${LIVE} THEN input.result ELSE task.result END,
  result_digest = CASE WHEN task.status IN ${LIVE} THEN input.result_digest ELSE task.result_digest END,
  error = CASE WHEN task.status IN ${LIVE} THEN input.error ELSE task.error END,
  status_message = CASE WHEN task.status IN ${LIVE} THEN COALESCE(input.message, task.status_message)
                        ELSE task.status_message END,
  input_requests = CASE WHEN task.status IN ${LIVE} THEN '{}'::jsonb ELSE task.input_requests END,
  terminal_at = CASE WHEN task.status IN ${LIVE} THEN input.now ELSE task.terminal_at END,
  updated_at = CASE WHEN task.status IN ${LIVE} THEN input.now ELSE task.updated_at END,
  late_outcome = CASE WHEN task.status IN ${LIVE} THEN task.late_outcome ELSE input.late END,
  event_seq = CASE WHEN task.status IN ${LIVE} THEN task.event_seq + 1 ELSE task.event_seq END,
  lease_owner = NULL,
  lease_expires_at = NULL
FROM input
WHERE task.id = input.id AND task.lease_owner = input.worker AND task.epoch = input.epoch
RETURNING ${taskColumnsOf('task')}, input.ord, input.status AS wanted, input.now, task.webhooks
), status_event AS (
  INSERT INTO ${t.events} (task_id, seq, at, kind, data, log_seq)
  SELECT id, event_seq, now, 'status', jsonb_build_object('status', status, 'statusMessage', status_message)
         || CASE WHEN status = 'completed' AND result_digest IS NOT NULL
                 THEN jsonb_build_object('resultDigest', result_digest) ELSE '{}'::jsonb END, NULL
  FROM done WHERE status = wanted
), status_outbox AS (
  INSERT INTO ${t.outbox} (task_id, seq, endpoint, owner, tool, url, secret, status, status_message, event_at,
                           state, attempts, next_at, created_at)
  SELECT done.id, done.event_seq, w.ord, done.owner, done.tool, w.hook->>'url', w.hook->>'secret', done.status,
         done.status_message, done.now, 'pending', 0, done.now, done.now
  FROM done CROSS JOIN LATERAL jsonb_array_elements(COALESCE(done.webhooks, '[]'::jsonb))
       WITH ORDINALITY AS w (hook, ord)
  WHERE done.status = done.wanted
)
SELECT ${TASK_COLUMNS}, ord, wanted FROM done`;

const ORD = TASK_COLUMN_COUNT;
const WANTED = TASK_COLUMN_COUNT + 1;

/** What runs the statement: the store's pool (autocommit) or a transaction that other writes join. */
export interface FinishQuery {
  query<R extends object>(sql: Sql, params: readonly unknown[], options?: QueryOptions): Promise<{ rows: R[] }>;
}

function late(item: FinishItem): LateOutcome {
  const { fence, outcome, now } = item;
  return outcome.status === 'completed'
    ? { epoch: fence.epoch, at: now, result: outcome.result }
    : { epoch: fence.epoch, at: now, error: outcome.error };
}

/**
 * Records `items` in one statement through `q`, one outcome per item, in order. The terminal write
 * of a task, its status event and its outbox rows are this one statement; a write that must commit
 * with them joins it by running `finishTasks` inside `db.transaction` with its own statement beside it.
 */
export async function finishTasks(
  q: FinishQuery,
  items: readonly FinishItem[],
): Promise<BatchOutcome<FinishOutcome>[]> {
  const document = JSON.stringify(
    items.map((item, ord) => {
      const { fence, outcome, now } = item;
      return {
        ord,
        id: fence.taskId,
        worker: fence.workerId,
        epoch: fence.epoch,
        status: outcome.status,
        result: outcome.status === 'completed' ? outcome.result : null,
        result_digest: outcome.status === 'completed' ? outcome.resultDigest : null,
        error: outcome.status === 'failed' ? outcome.error : null,
        message: outcome.status === 'failed' ? (outcome.statusMessage ?? null) : null,
        late: late(item),
        now,
      };
    }),
  );
  const rows = (await q.query<TaskValues>(FINISH_BATCH, [document], ROWS)).rows;
  const byOrd = new Map(rows.map((r) => [r[ORD] as number, r]));
  return items.map((item, ord): BatchOutcome<FinishOutcome> => {
    const found = byOrd.get(ord);
    if (found === undefined) return { ok: false, error: leaseLost(item.fence.taskId, item.fence.epoch) };
    const task = toRecord(found);
    // The status asked for is there: recorded. Otherwise a cancel had won (the only terminal
    // status a fenced row can hold, since a finish releases the lease): kept as late_outcome.
    if (task.status === found[WANTED]) return { ok: true, value: { outcome: 'recorded', task } };
    return { ok: true, value: { outcome: 'late', task, late: task.lateOutcome as LateOutcome } };
  });
}
