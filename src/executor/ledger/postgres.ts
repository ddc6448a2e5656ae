/**
 * PostgreSQL `Ledger`: several executors (or executor processes on several machines) share one
 * ledger. Every write is one transaction that locks what it decides on: the operation row
 * (`FOR UPDATE`, so two steps of one record queue and the revision compare-and-set decides), the
 * epoch row (`FOR SHARE`, so a rollback's `bumpEpoch` waits for writes fenced by the old epoch),
 * and the unique keys (call node, submission key, receipt per call node), so racing executors
 * never make a second operation or a second receipt.
 */
import { TerminusError } from '../../core/errors.js';
import type { Clock, Logger } from '../../core/ports.js';
import { systemClock } from '../../core/system.js';
import { createDb, quoteIdent, type Db } from '../../sql/pg-db.js';
import { sqlState } from '../../sql/pg-errors.js';
import { migrate } from '../../sql/pg-migrate.js';
import { checkServer, poolFor, type ConnectOptions } from '../../sql/pg-pool.js';
import { PRUNABLE_STATES, type Ledger } from '../ledger-port.js';
import { checkAcceptance, checkApply, checkCreate, checkRecreate, keyConflict } from './checks.js';
import { LEDGER_MIGRATIONS, type LedgerTables } from './postgres-migrations.js';
import * as sql from './postgres-ops.js';

export interface PostgresLedgerOptions extends ConnectOptions {
  /** Schema holding the `ledger_*` tables; created when missing. Default `terminus`. */
  readonly schema?: string;
  /** Only stamps `schema_migrations.applied_at`; every ledger time comes from the caller's `now`. */
  readonly clock?: Clock;
  readonly logger?: Logger;
}

function ledgerTables(schema: string): LedgerTables {
  const s = quoteIdent(schema);
  return {
    schemaName: schema,
    schema: s,
    migrations: `${s}.schema_migrations`,
    meta: `${s}.ledger_meta`,
    operations: `${s}.ledger_operations`,
    keys: `${s}.ledger_submission_keys`,
    receipts: `${s}.ledger_receipts`,
    outbox: `${s}.ledger_outbox`,
  };
}

/**
 * Opens a PostgreSQL ledger: checks the server (reachable, version 13 or newer), applies the
 * missing ledger migrations under the schema's advisory lock, and returns the ledger. Rejects
 * `unavailable` when the database cannot be reached, `invalid_argument` for a server older than 13.
 *
 * @example
 * ```ts
 * import { openPostgresLedger } from 'mcp-terminus/postgres';
 * const ledger = await openPostgresLedger({ connectionString: 'postgres://executor@db.internal/terminus' });
 * // ... on shutdown:
 * await ledger.close();
 * ```
 */
export async function openPostgresLedger(options: PostgresLedgerOptions): Promise<Ledger> {
  const connection = poolFor(options, 'mcp-terminus-ledger');
  let closed = false;
  const db: Db<LedgerTables> = createDb(connection.pool, ledgerTables(options.schema ?? 'terminus'), () => closed);
  try {
    const { version } = await checkServer(connection);
    const applied = await migrate(db, 'ledger', LEDGER_MIGRATIONS, (options.clock ?? systemClock).now());
    options.logger?.info('postgres ledger ready', { target: connection.target, version, applied });
  } catch (error) {
    if (connection.owned) await connection.pool.end().catch(() => undefined);
    throw error;
  }

  const read = (where: string): sql.Q => ({ query: (text, params) => db.query(where, text, params) });
  const write = <T>(where: string, fn: (q: sql.Q) => Promise<T>): Promise<T> =>
    db.transaction(where, fn).catch((error: unknown) => {
      // A unique index caught what the checks could not see yet (a concurrent writer): same meaning.
      if (error instanceof TerminusError && sqlState(error.cause) === '23505') {
        throw new TerminusError('operation_conflict', `ledger constraint violated (${where})`, { cause: error.cause });
      }
      throw error;
    });
  const claimKey = async (q: sql.Q, key: string, operationId: string): Promise<void> => {
    const owner = await sql.claimKey(q, key, operationId);
    if (owner !== operationId) throw keyConflict(key, owner);
  };

  return {
    create: (record) =>
      write('ledger.create', async (q) => {
        const existing = await sql.selectByCallNode(q, record.callNodeId);
        if (existing !== null) {
          checkRecreate(existing, record);
          return { created: false, operation: existing };
        }
        checkCreate(record, await sql.selectEpochShared(q));
        const stored = { ...record, revision: 1 };
        if (!(await sql.insertOperation(q, stored))) {
          // Lost a race: the other insert committed while we waited on its unique key.
          const winner = await sql.selectByCallNode(q, record.callNodeId);
          if (winner === null) throw new TerminusError('operation_conflict', `operation ${record.id} exists`);
          checkRecreate(winner, record);
          return { created: false, operation: winner };
        }
        await claimKey(q, stored.submissionKey, stored.id);
        return { created: true, operation: stored };
      }),
    load: (id) => sql.selectOperation(read('ledger.load'), id),
    loadByCallNode: (callNodeId) => sql.selectByCallNode(read('ledger.loadByCallNode'), callNodeId),
    listByState: (states, limit) => sql.selectByState(read('ledger.listByState'), states, limit),
    apply: (step) =>
      write('ledger.apply', async (q) => {
        const locked = await sql.lockOperation(q, step.record.id);
        const stored = checkApply(locked, step, await sql.selectEpochShared(q));
        await claimKey(q, stored.submissionKey, stored.id);
        await sql.updateOperation(q, stored, step.expectedRevision);
        return stored;
      }),
    acceptTerminal: (input) =>
      write('ledger.acceptTerminal', async (q) => {
        // Lock first, then look for a receipt: a concurrent acceptance of the same call node has
        // committed by the time we hold the row, so we return its receipt instead of a conflict (C1).
        const locked = await sql.lockOperation(q, input.record.id);
        const existing = await sql.selectReceipt(q, input.record.callNodeId);
        if (existing !== null) return { accepted: false as const, receipt: existing };
        const plan = checkAcceptance(locked, input, await sql.selectEpochShared(q));
        await sql.updateOperation(q, plan.record, input.expectedRevision);
        await sql.insertReceipt(q, plan.receipt);
        if (plan.outbox !== null) await sql.insertOutbox(q, plan.outbox);
        return { accepted: true as const, receipt: plan.receipt, operation: plan.record };
      }),
    getReceipt: (callNodeId) => sql.selectReceipt(read('ledger.getReceipt'), callNodeId),
    listOutbox: (limit) => sql.selectOutbox(read('ledger.listOutbox'), limit),
    acknowledgeOutbox: (id, now) => sql.acknowledgeOutbox(read('ledger.acknowledgeOutbox'), id, now),
    currentEpoch: () => sql.selectEpoch(read('ledger.currentEpoch')),
    bumpEpoch: () => write('ledger.bumpEpoch', (q) => sql.bumpEpoch(q)),
    findBySubmissionKey: (key) => sql.selectBySubmissionKey(read('ledger.findBySubmissionKey'), key),
    findByTaskId: (taskId) => sql.selectByTaskId(read('ledger.findByTaskId'), taskId),
    prune: ({ updatedBefore, limit, dryRun }) =>
      write('ledger.prune', async (q) => {
        const ids = await sql.selectPrunable(q, PRUNABLE_STATES, updatedBefore, limit);
        if (dryRun === true) return ids;
        if (ids.length > 0) await sql.deleteOperations(q, ids);
        return ids;
      }),
    close: async () => {
      if (closed) return;
      closed = true;
      if (connection.owned) await connection.pool.end();
    },
  };
}
