/**
 * One SQL operation per function, the SQL beside it. All take `now` and ids as parameters; none
 * opens a transaction (the caller in `sqlite.ts` does).
 */
import type { Database, Statement } from 'better-sqlite3';
import { TerminusError } from '../../core/errors.js';
import type { OutboxRow, Receipt } from '../ledger-port.js';
import {
  isLocalState,
  type LocalState,
  type ReceiptStatus,
  type SessionBinding,
  type ToolOperation,
} from '../operation.js';

const cache = new WeakMap<Database, Map<string, Statement>>();

function statement(db: Database, sql: string): Statement {
  let byDb = cache.get(db);
  if (byDb === undefined) {
    byDb = new Map();
    cache.set(db, byDb);
  }
  let prepared = byDb.get(sql);
  if (prepared === undefined) {
    prepared = db.prepare(sql);
    byDb.set(sql, prepared);
  }
  return prepared;
}

interface OperationRow {
  record: string;
  revision: number;
  state: string;
  session: string | null;
}

function toOperation(row: OperationRow): ToolOperation {
  if (!isLocalState(row.state)) throw new TerminusError('internal', `ledger row has unknown state ${row.state}`);
  const record = JSON.parse(row.record) as ToolOperation;
  const session = row.session === null ? {} : { session: JSON.parse(row.session) as SessionBinding };
  return { ...record, ...session, state: row.state, revision: row.revision };
}

const SELECT_EPOCH = `SELECT value FROM ledger_meta WHERE key = 'epoch'`;
export function selectEpoch(db: Database): number {
  return statement(db, SELECT_EPOCH).pluck().get() as number;
}

const BUMP_EPOCH = `UPDATE ledger_meta SET value = value + 1 WHERE key = 'epoch' RETURNING value`;
export function bumpEpoch(db: Database): number {
  return statement(db, BUMP_EPOCH).pluck().get() as number;
}

const COLUMNS = `record, revision, state, session`;

const SELECT_BY_ID = `SELECT ${COLUMNS} FROM operations WHERE id = ?`;
export function selectOperation(db: Database, id: string): ToolOperation | null {
  const row = statement(db, SELECT_BY_ID).get(id) as OperationRow | undefined;
  return row === undefined ? null : toOperation(row);
}

const SELECT_BY_CALL_NODE = `SELECT ${COLUMNS} FROM operations WHERE call_node_id = ?`;
export function selectByCallNode(db: Database, callNodeId: string): ToolOperation | null {
  const row = statement(db, SELECT_BY_CALL_NODE).get(callNodeId) as OperationRow | undefined;
  return row === undefined ? null : toOperation(row);
}

const SELECT_BY_STATE = `
SELECT ${COLUMNS} FROM operations
WHERE state IN (SELECT value FROM json_each(?))
ORDER BY updated_at, id
LIMIT ?`;
export function selectByState(db: Database, states: readonly LocalState[], limit: number): ToolOperation[] {
  const rows = statement(db, SELECT_BY_STATE).all(JSON.stringify(states), Math.max(0, Math.floor(limit)));
  return (rows as OperationRow[]).map(toOperation);
}

const SELECT_BY_KEY = `
SELECT ${COLUMNS} FROM operations
WHERE id = (SELECT operation_id FROM submission_keys WHERE submission_key = ?)`;
export function selectBySubmissionKey(db: Database, key: string): ToolOperation | null {
  const row = statement(db, SELECT_BY_KEY).get(key) as OperationRow | undefined;
  return row === undefined ? null : toOperation(row);
}

const SELECT_BY_TASK = `SELECT ${COLUMNS} FROM operations WHERE task_id = ? ORDER BY updated_at, id`;
export function selectByTaskId(db: Database, taskId: string): ToolOperation[] {
  return (statement(db, SELECT_BY_TASK).all(taskId) as OperationRow[]).map(toOperation);
}

const SELECT_KEY_OWNER = `SELECT operation_id FROM submission_keys WHERE submission_key = ?`;
export function selectKeyOwner(db: Database, key: string): string | null {
  return (statement(db, SELECT_KEY_OWNER).pluck().get(key) as string | undefined) ?? null;
}

const INSERT_KEY = `INSERT INTO submission_keys (submission_key, operation_id) VALUES (?, ?) ON CONFLICT DO NOTHING`;
export function insertKey(db: Database, key: string, operationId: string): void {
  statement(db, INSERT_KEY).run(key, operationId);
}

const INSERT_OPERATION = `
INSERT INTO operations
  (id, call_node_id, request_digest, submission_key, task_id, state, revision, execution_epoch, updated_at, record,
   session)
VALUES
  (@id, @callNodeId, @requestDigest, @submissionKey, @taskId, @state, @revision, @executionEpoch, @updatedAt, @record,
   @session)`;
export function insertOperation(db: Database, op: ToolOperation): void {
  statement(db, INSERT_OPERATION).run(operationParams(op));
}

/** Compare-and-set on the revision: zero rows means another writer stepped the record first. */
const UPDATE_OPERATION = `
UPDATE operations
SET submission_key = @submissionKey, task_id = @taskId, state = @state, revision = @revision,
    execution_epoch = @executionEpoch, updated_at = @updatedAt, record = @record, session = @session
WHERE id = @id AND revision = @expectedRevision`;
export function updateOperation(db: Database, op: ToolOperation, expectedRevision: number): void {
  const { changes } = statement(db, UPDATE_OPERATION).run({ ...operationParams(op), expectedRevision });
  if (changes !== 1) throw new TerminusError('revision_conflict', `operation ${op.id} changed concurrently`);
}

/** The record column holds everything but the revision and the session (a secret, in its own column). */
function operationParams(op: ToolOperation): Record<string, unknown> {
  const { revision: _revision, session, ...rest } = op;
  return {
    id: op.id,
    callNodeId: op.callNodeId,
    requestDigest: op.requestDigest,
    submissionKey: op.submissionKey,
    taskId: op.taskId,
    state: op.state,
    revision: op.revision,
    executionEpoch: op.executionEpoch,
    updatedAt: op.updatedAt,
    record: JSON.stringify(rest),
    session: session === undefined || session === null ? null : JSON.stringify(session),
  };
}

interface ReceiptRow {
  id: string;
  call_node_id: string;
  operation_id: string;
  task_id: string;
  status: string;
  result_digest: string | null;
  payload: string;
  epoch: number;
  cancel_generation: number;
  shadow: number;
  accepted_at: number;
  immediate: number;
}

const SELECT_RECEIPT = `SELECT * FROM receipts WHERE call_node_id = ?`;
export function selectReceipt(db: Database, callNodeId: string): Receipt | null {
  const row = statement(db, SELECT_RECEIPT).get(callNodeId) as ReceiptRow | undefined;
  if (row === undefined) return null;
  return {
    id: row.id,
    callNodeId: row.call_node_id,
    operationId: row.operation_id,
    taskId: row.task_id,
    status: row.status as ReceiptStatus,
    resultDigest: row.result_digest,
    payload: JSON.parse(row.payload),
    epoch: row.epoch,
    cancelGeneration: row.cancel_generation,
    shadow: row.shadow === 1,
    acceptedAt: row.accepted_at,
    ...(row.immediate === 1 ? { immediate: true } : {}),
  };
}

const INSERT_RECEIPT = `
INSERT INTO receipts
  (id, call_node_id, operation_id, task_id, status, result_digest, payload, epoch, cancel_generation, shadow, accepted_at,
   immediate)
VALUES
  (@id, @callNodeId, @operationId, @taskId, @status, @resultDigest, @payload, @epoch, @cancelGeneration, @shadow, @acceptedAt,
   @immediate)`;
export function insertReceipt(db: Database, receipt: Receipt): void {
  statement(db, INSERT_RECEIPT).run({
    ...receipt,
    payload: JSON.stringify(receipt.payload ?? null),
    shadow: receipt.shadow ? 1 : 0,
    immediate: receipt.immediate === true ? 1 : 0,
  });
}

const INSERT_OUTBOX = `
INSERT INTO outbox (receipt_id, call_node_id, operation_id, status, created_at)
VALUES (@receiptId, @callNodeId, @operationId, @status, @createdAt)`;
export function insertOutbox(db: Database, row: Omit<OutboxRow, 'id'>): void {
  statement(db, INSERT_OUTBOX).run(row);
}

interface OutboxDbRow {
  id: number;
  receipt_id: string;
  call_node_id: string;
  operation_id: string;
  status: string;
  created_at: number;
  acknowledged_at: number | null;
}

const SELECT_OUTBOX = `SELECT * FROM outbox WHERE acknowledged_at IS NULL ORDER BY id LIMIT ?`;
export function selectOutbox(db: Database, limit: number): OutboxRow[] {
  const rows = statement(db, SELECT_OUTBOX).all(Math.max(0, Math.floor(limit))) as OutboxDbRow[];
  return rows.map((row) => ({
    id: row.id,
    receiptId: row.receipt_id,
    callNodeId: row.call_node_id,
    operationId: row.operation_id,
    status: row.status as ReceiptStatus,
    createdAt: row.created_at,
    acknowledgedAt: row.acknowledged_at,
  }));
}

const ACK_OUTBOX = `UPDATE outbox SET acknowledged_at = ? WHERE id = ? AND acknowledged_at IS NULL`;
export function acknowledgeOutbox(db: Database, id: number, now: number): boolean {
  return statement(db, ACK_OUTBOX).run(now, id).changes === 1;
}

const CREATE_MIGRATIONS = `
CREATE TABLE IF NOT EXISTS ledger_migrations (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL
) STRICT`;
export function createMigrationsTable(db: Database): void {
  db.exec(CREATE_MIGRATIONS);
}

const SELECT_MIGRATIONS = `SELECT id FROM ledger_migrations ORDER BY id`;
export function selectMigrations(db: Database): number[] {
  return db.prepare(SELECT_MIGRATIONS).pluck().all() as number[];
}

const INSERT_MIGRATION = `INSERT INTO ledger_migrations (id, name) VALUES (?, ?)`;
export function insertMigration(db: Database, id: number, name: string): void {
  db.prepare(INSERT_MIGRATION).run(id, name);
}

/** Prunable operations, oldest first, without an unacknowledged outbox row (`Ledger.prune`). */
const SELECT_PRUNABLE = `
SELECT o.id FROM operations o
WHERE o.state IN (SELECT value FROM json_each(?)) AND o.updated_at < ?
  AND NOT EXISTS (SELECT 1 FROM outbox x WHERE x.operation_id = o.id AND x.acknowledged_at IS NULL)
ORDER BY o.updated_at, o.id
LIMIT ?`;
export function selectPrunable(db: Database, states: readonly LocalState[], before: number, limit: number): string[] {
  return statement(db, SELECT_PRUNABLE)
    .pluck()
    .all(JSON.stringify(states), before, Math.max(0, Math.floor(limit))) as string[];
}

const DELETE_OPERATION = [
  `DELETE FROM outbox WHERE operation_id = ?`,
  `DELETE FROM receipts WHERE operation_id = ?`,
  `DELETE FROM submission_keys WHERE operation_id = ?`,
  `DELETE FROM operations WHERE id = ?`,
];
/** One operation and everything that points at it (children first: foreign keys are on). */
export function deleteOperation(db: Database, id: string): void {
  for (const text of DELETE_OPERATION) statement(db, text).run(id);
}
