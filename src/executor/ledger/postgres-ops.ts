/**
 * One SQL operation per function, the SQL beside it. All take `now` and ids as parameters; none
 * opens a transaction (the caller in `postgres.ts` does). `q` is a client inside that transaction,
 * or the pool for single reads.
 */
import type { QueryResult, QueryResultRow } from 'pg';
import { TerminusError } from '../../core/errors.js';
import type { Sql } from '../../sql/pg-db.js';
import type { OutboxRow, Receipt } from '../ledger-port.js';
import {
  isLocalState,
  type LocalState,
  type ReceiptStatus,
  type SessionBinding,
  type ToolOperation,
} from '../operation.js';
import type { LedgerTables } from './postgres-migrations.js';

type LedgerSql = Sql<LedgerTables>;

/** A transaction client, or the pool for single reads. */
export interface Q {
  query<R extends QueryResultRow>(sql: LedgerSql, params: readonly unknown[]): Promise<QueryResult<R>>;
}

interface OperationRow {
  record: ToolOperation;
  revision: number;
  state: string;
  session: SessionBinding | null;
}

function toOperation(row: OperationRow): ToolOperation {
  if (!isLocalState(row.state)) throw new TerminusError('internal', `ledger row has unknown state ${row.state}`);
  const session = row.session === null ? {} : { session: row.session };
  return { ...row.record, ...session, state: row.state, revision: row.revision };
}

const SELECT_EPOCH: LedgerSql = (t) => `SELECT value FROM ${t.meta} WHERE key = 'epoch'`;
export async function selectEpoch(q: Q): Promise<number> {
  return Number((await q.query<{ value: string }>(SELECT_EPOCH, [])).rows[0]?.value ?? 0);
}

/**
 * The epoch, share-locked to the end of the transaction: a `bumpEpoch` waits for every write that
 * read the old epoch to commit, and every write that starts after it sees the new one.
 */
const SELECT_EPOCH_SHARED: LedgerSql = (t) => `SELECT value FROM ${t.meta} WHERE key = 'epoch' FOR SHARE`;
export async function selectEpochShared(q: Q): Promise<number> {
  return Number((await q.query<{ value: string }>(SELECT_EPOCH_SHARED, [])).rows[0]?.value ?? 0);
}

const BUMP_EPOCH: LedgerSql = (t) => `UPDATE ${t.meta} SET value = value + 1 WHERE key = 'epoch' RETURNING value`;
export async function bumpEpoch(q: Q): Promise<number> {
  return Number((await q.query<{ value: string }>(BUMP_EPOCH, [])).rows[0]?.value);
}

const SELECT_BY_ID: LedgerSql = (t) => `SELECT record, revision, state, session FROM ${t.operations} WHERE id = $1`;
export async function selectOperation(q: Q, id: string): Promise<ToolOperation | null> {
  const row = (await q.query<OperationRow>(SELECT_BY_ID, [id])).rows[0];
  return row === undefined ? null : toOperation(row);
}

/** The row locked for this transaction: concurrent steps of one operation queue here. */
const LOCK_BY_ID: LedgerSql = (t) =>
  `SELECT record, revision, state, session FROM ${t.operations} WHERE id = $1 FOR UPDATE`;
export async function lockOperation(q: Q, id: string): Promise<ToolOperation | null> {
  const row = (await q.query<OperationRow>(LOCK_BY_ID, [id])).rows[0];
  return row === undefined ? null : toOperation(row);
}

const SELECT_BY_CALL_NODE: LedgerSql = (t) =>
  `SELECT record, revision, state, session FROM ${t.operations} WHERE call_node_id = $1`;
export async function selectByCallNode(q: Q, callNodeId: string): Promise<ToolOperation | null> {
  const row = (await q.query<OperationRow>(SELECT_BY_CALL_NODE, [callNodeId])).rows[0];
  return row === undefined ? null : toOperation(row);
}

const SELECT_BY_STATE: LedgerSql = (t) => `
SELECT record, revision, state, session FROM ${t.operations}
WHERE state = ANY ($1::text[])
ORDER BY updated_at, id
LIMIT $2`;
export async function selectByState(q: Q, states: readonly LocalState[], limit: number): Promise<ToolOperation[]> {
  const rows = (await q.query<OperationRow>(SELECT_BY_STATE, [[...states], Math.max(0, Math.floor(limit))])).rows;
  return rows.map(toOperation);
}

const SELECT_BY_KEY: LedgerSql = (t) => `
SELECT o.record, o.revision, o.state, o.session FROM ${t.operations} o
JOIN ${t.keys} k ON k.operation_id = o.id
WHERE k.submission_key = $1`;
export async function selectBySubmissionKey(q: Q, key: string): Promise<ToolOperation | null> {
  const row = (await q.query<OperationRow>(SELECT_BY_KEY, [key])).rows[0];
  return row === undefined ? null : toOperation(row);
}

const SELECT_BY_TASK: LedgerSql = (t) =>
  `SELECT record, revision, state, session FROM ${t.operations} WHERE task_id = $1 ORDER BY updated_at, id`;
export async function selectByTaskId(q: Q, taskId: string): Promise<ToolOperation[]> {
  return (await q.query<OperationRow>(SELECT_BY_TASK, [taskId])).rows.map(toOperation);
}

/**
 * Claims the key for the operation, or finds who holds it. Two executors racing on one key meet
 * on the primary key: the second INSERT waits for the first transaction, then does nothing, and
 * the SELECT (a fresh snapshot) reads the winner.
 */
const INSERT_KEY: LedgerSql = (t) =>
  `INSERT INTO ${t.keys} (submission_key, operation_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`;
const SELECT_KEY_OWNER: LedgerSql = (t) => `SELECT operation_id FROM ${t.keys} WHERE submission_key = $1`;
export async function claimKey(q: Q, key: string, operationId: string): Promise<string> {
  await q.query(INSERT_KEY, [key, operationId]);
  return (await q.query<{ operation_id: string }>(SELECT_KEY_OWNER, [key])).rows[0]?.operation_id ?? operationId;
}

/** Conflicts on the call node (or id) write nothing; the caller then reads the existing row. */
const INSERT_OPERATION: LedgerSql = (t) => `
INSERT INTO ${t.operations}
  (id, call_node_id, request_digest, submission_key, task_id, state, revision, execution_epoch, updated_at, record,
   session)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::jsonb)
ON CONFLICT DO NOTHING`;
export async function insertOperation(q: Q, op: ToolOperation): Promise<boolean> {
  return (await q.query(INSERT_OPERATION, operationParams(op))).rowCount === 1;
}

/** Compare-and-set on the revision: zero rows means another writer stepped the record first. */
const UPDATE_OPERATION: LedgerSql = (t) => `
UPDATE ${t.operations}
SET submission_key = $2, task_id = $3, state = $4, revision = $5, execution_epoch = $6, updated_at = $7,
    record = $8::jsonb, session = $9::jsonb
WHERE id = $1 AND revision = $10`;
export async function updateOperation(q: Q, op: ToolOperation, expectedRevision: number): Promise<void> {
  const [id, _callNode, _digest, ...changeable] = operationParams(op);
  const { rowCount } = await q.query(UPDATE_OPERATION, [id, ...changeable, expectedRevision]);
  if (rowCount !== 1) throw new TerminusError('revision_conflict', `operation ${op.id} changed concurrently`);
}

/** The record column holds everything but the revision and the session (a secret, in its own column). */
function operationParams(op: ToolOperation): unknown[] {
  const { revision: _revision, session, ...rest } = op;
  return [
    op.id,
    op.callNodeId,
    op.requestDigest,
    op.submissionKey,
    op.taskId,
    op.state,
    op.revision,
    op.executionEpoch,
    op.updatedAt,
    JSON.stringify(rest),
    session === undefined || session === null ? null : JSON.stringify(session),
  ];
}

interface ReceiptRow {
  id: string;
  call_node_id: string;
  operation_id: string;
  task_id: string;
  status: string;
  result_digest: string | null;
  payload: unknown;
  epoch: number;
  cancel_generation: number;
  shadow: boolean;
  accepted_at: string;
  immediate: boolean;
}

const SELECT_RECEIPT: LedgerSql = (t) => `SELECT * FROM ${t.receipts} WHERE call_node_id = $1`;
export async function selectReceipt(q: Q, callNodeId: string): Promise<Receipt | null> {
  const row = (await q.query<ReceiptRow>(SELECT_RECEIPT, [callNodeId])).rows[0];
  if (row === undefined) return null;
  return {
    id: row.id,
    callNodeId: row.call_node_id,
    operationId: row.operation_id,
    taskId: row.task_id,
    status: row.status as ReceiptStatus,
    resultDigest: row.result_digest,
    payload: row.payload,
    epoch: row.epoch,
    cancelGeneration: row.cancel_generation,
    shadow: row.shadow,
    acceptedAt: Number(row.accepted_at),
    ...(row.immediate ? { immediate: true } : {}),
  };
}

const INSERT_RECEIPT: LedgerSql = (t) => `
INSERT INTO ${t.receipts}
  (id, call_node_id, operation_id, task_id, status, result_digest, payload, epoch, cancel_generation, shadow,
   accepted_at, immediate)
VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12)`;
export async function insertReceipt(q: Q, r: Receipt): Promise<void> {
  await q.query(INSERT_RECEIPT, [
    r.id,
    r.callNodeId,
    r.operationId,
    r.taskId,
    r.status,
    r.resultDigest,
    JSON.stringify(r.payload ?? null),
    r.epoch,
    r.cancelGeneration,
    r.shadow,
    r.acceptedAt,
    r.immediate === true,
  ]);
}

const INSERT_OUTBOX: LedgerSql = (t) => `
INSERT INTO ${t.outbox} (receipt_id, call_node_id, operation_id, status, created_at)
VALUES ($1, $2, $3, $4, $5)`;
export async function insertOutbox(q: Q, row: Omit<OutboxRow, 'id'>): Promise<void> {
  await q.query(INSERT_OUTBOX, [row.receiptId, row.callNodeId, row.operationId, row.status, row.createdAt]);
}

interface OutboxDbRow {
  id: string;
  receipt_id: string;
  call_node_id: string;
  operation_id: string;
  status: string;
  created_at: string;
  acknowledged_at: string | null;
}

const SELECT_OUTBOX: LedgerSql = (t) => `SELECT * FROM ${t.outbox} WHERE acknowledged_at IS NULL ORDER BY id LIMIT $1`;
export async function selectOutbox(q: Q, limit: number): Promise<OutboxRow[]> {
  const rows = (await q.query<OutboxDbRow>(SELECT_OUTBOX, [Math.max(0, Math.floor(limit))])).rows;
  return rows.map((row) => ({
    id: Number(row.id),
    receiptId: row.receipt_id,
    callNodeId: row.call_node_id,
    operationId: row.operation_id,
    status: row.status as ReceiptStatus,
    createdAt: Number(row.created_at),
    acknowledgedAt: row.acknowledged_at === null ? null : Number(row.acknowledged_at),
  }));
}

const ACK_OUTBOX: LedgerSql = (t) =>
  `UPDATE ${t.outbox} SET acknowledged_at = $1 WHERE id = $2 AND acknowledged_at IS NULL`;
export async function acknowledgeOutbox(q: Q, id: number, now: number): Promise<boolean> {
  return (await q.query(ACK_OUTBOX, [now, id])).rowCount === 1;
}

/** Prunable operations, oldest first, without an unacknowledged outbox row (`Ledger.prune`); locked. */
const SELECT_PRUNABLE: LedgerSql = (t) => `
SELECT o.id FROM ${t.operations} o
WHERE o.state = ANY($1::text[]) AND o.updated_at < $2
  AND NOT EXISTS (SELECT 1 FROM ${t.outbox} x WHERE x.operation_id = o.id AND x.acknowledged_at IS NULL)
ORDER BY o.updated_at, o.id
LIMIT $3
FOR UPDATE OF o SKIP LOCKED`;
export async function selectPrunable(
  q: Q,
  states: readonly LocalState[],
  before: number,
  limit: number,
): Promise<string[]> {
  const rows = (await q.query<{ id: string }>(SELECT_PRUNABLE, [[...states], before, Math.max(0, Math.floor(limit))]))
    .rows;
  return rows.map((row) => row.id);
}

const DELETE_OUTBOX: LedgerSql = (t) => `DELETE FROM ${t.outbox} WHERE operation_id = ANY($1::text[])`;
const DELETE_RECEIPTS: LedgerSql = (t) => `DELETE FROM ${t.receipts} WHERE operation_id = ANY($1::text[])`;
const DELETE_KEYS: LedgerSql = (t) => `DELETE FROM ${t.keys} WHERE operation_id = ANY($1::text[])`;
const DELETE_OPERATIONS: LedgerSql = (t) => `DELETE FROM ${t.operations} WHERE id = ANY($1::text[])`;
/** Operations and everything that points at them (children first: foreign keys). */
export async function deleteOperations(q: Q, ids: readonly string[]): Promise<void> {
  for (const text of [DELETE_OUTBOX, DELETE_RECEIPTS, DELETE_KEYS, DELETE_OPERATIONS]) await q.query(text, [[...ids]]);
}
