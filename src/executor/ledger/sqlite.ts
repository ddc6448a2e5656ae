/**
 * SQLite `Ledger` on better-sqlite3: WAL, `synchronous=FULL` (a resolved write survives power loss),
 * every write one IMMEDIATE transaction, so two processes sharing the file serialise on SQLite's
 * write lock and the revision compare-and-set decides which step wins.
 */
import { chmodSync, existsSync } from 'node:fs';
import Database, { SqliteError } from 'better-sqlite3';
import { TerminusError } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/ports.js';
import { damageOf, openCheckedDatabase } from '../../sql/sqlite-open.js';
import { PRUNABLE_STATES, type Ledger } from '../ledger-port.js';
import { checkAcceptance, checkApply, checkCreate, checkRecreate, keyConflict } from './checks.js';
import { LEDGER_MIGRATIONS, type LedgerMigration } from './sqlite-migrations.js';
import * as sql from './sqlite-ops.js';

export interface SqliteLedgerOptions {
  /** A file path (default `DEFAULT_LEDGER_PATH`, whose folder the CLI creates) or `':memory:'`. */
  readonly path: string;
  /** How long a write waits for another process's lock before `unavailable`. Default 5000. */
  readonly busyTimeoutMs?: number;
  /** Where a damaged WAL header (its transactions copied aside, then lost to SQLite) is reported. */
  readonly logger?: Logger;
}

/**
 * Opens (creating and migrating if needed) a SQLite ledger.
 *
 * @example
 * ```ts
 * const ledger = openSqliteLedger({ path: DEFAULT_LEDGER_PATH });
 * // ... on shutdown:
 * await ledger.close();
 * ```
 */
export function openSqliteLedger(options: SqliteLedgerOptions): Ledger {
  // A file is checked as the task store's is: a damaged ledger opened in silence would forget the
  // operations it holds, and a call made again would be submitted again.
  let db: Database.Database;
  const creating = options.path !== ':memory:' && !existsSync(options.path);
  try {
    db = openCheckedDatabase(options.path, {
      timeoutMs: options.busyTimeoutMs ?? 5000,
      logger: options.logger ?? silentLogger,
      full: false,
    });
  } catch (error) {
    throw mapError(error);
  }
  try {
    // The ledger holds session ids (bearer-like secrets, `ToolOperation.session`): a file it creates
    // is its owner's only, before anything is written. SQLite gives the WAL and shared-memory files
    // the database file's mode. A file that already exists keeps the mode its owner chose.
    if (creating) chmodSync(options.path, 0o600);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrateLedger(db);
  } catch (error) {
    db.close();
    throw damageOf(options.path, error) ?? mapError(error);
  }
  let closed = false;
  const run = async <T>(op: () => T): Promise<T> => {
    if (closed) throw new TerminusError('unavailable', 'ledger is closed');
    try {
      return op();
    } catch (error) {
      throw mapError(error);
    }
  };
  const write = <T>(op: () => T): Promise<T> => run(() => db.transaction(op).immediate());
  // A bookkeeping step (`AppliedStep.durable === false`) commits without the WAL fsync; the next
  // FULL commit flushes it with its own frames, in order.
  const relaxed = db.prepare('PRAGMA synchronous = NORMAL');
  const full = db.prepare('PRAGMA synchronous = FULL');
  const writeRelaxed = <T>(op: () => T): Promise<T> =>
    run(() => {
      relaxed.run();
      try {
        return db.transaction(op).immediate();
      } finally {
        full.run();
      }
    });
  const claimKey = (key: string, operationId: string): void => {
    const owner = sql.selectKeyOwner(db, key);
    if (owner !== null && owner !== operationId) throw keyConflict(key, owner);
    sql.insertKey(db, key, operationId);
  };

  return {
    create: (record) =>
      write(() => {
        const existing = sql.selectByCallNode(db, record.callNodeId);
        if (existing !== null) {
          checkRecreate(existing, record);
          return { created: false, operation: existing };
        }
        checkCreate(record, sql.selectEpoch(db));
        if (sql.selectOperation(db, record.id) !== null) {
          throw new TerminusError('operation_conflict', `operation ${record.id} exists`);
        }
        const stored = { ...record, revision: 1 };
        sql.insertOperation(db, stored);
        claimKey(stored.submissionKey, stored.id);
        return { created: true, operation: stored };
      }),
    load: (id) => run(() => sql.selectOperation(db, id)),
    loadByCallNode: (callNodeId) => run(() => sql.selectByCallNode(db, callNodeId)),
    listByState: (states, limit) => run(() => sql.selectByState(db, states, limit)),
    apply: (step) =>
      (step.durable === false ? writeRelaxed : write)(() => {
        const stored = checkApply(sql.selectOperation(db, step.record.id), step, sql.selectEpoch(db));
        claimKey(stored.submissionKey, stored.id);
        sql.updateOperation(db, stored, step.expectedRevision);
        return stored;
      }),
    acceptTerminal: (input) =>
      write(() => {
        const existing = sql.selectReceipt(db, input.record.callNodeId);
        if (existing !== null) return { accepted: false as const, receipt: existing };
        const plan = checkAcceptance(sql.selectOperation(db, input.record.id), input, sql.selectEpoch(db));
        sql.updateOperation(db, plan.record, input.expectedRevision);
        sql.insertReceipt(db, plan.receipt);
        if (plan.outbox !== null) sql.insertOutbox(db, plan.outbox);
        return { accepted: true as const, receipt: plan.receipt, operation: plan.record };
      }),
    getReceipt: (callNodeId) => run(() => sql.selectReceipt(db, callNodeId)),
    listOutbox: (limit) => run(() => sql.selectOutbox(db, limit)),
    acknowledgeOutbox: (id, now) => write(() => sql.acknowledgeOutbox(db, id, now)),
    currentEpoch: () => run(() => sql.selectEpoch(db)),
    bumpEpoch: () => write(() => sql.bumpEpoch(db)),
    findBySubmissionKey: (key) => run(() => sql.selectBySubmissionKey(db, key)),
    findByTaskId: (taskId) => run(() => sql.selectByTaskId(db, taskId)),
    prune: ({ updatedBefore, limit, dryRun }) =>
      write(() => {
        const ids = sql.selectPrunable(db, PRUNABLE_STATES, updatedBefore, limit);
        if (dryRun === true) return ids;
        for (const id of ids) sql.deleteOperation(db, id);
        return ids;
      }),
    close: async () => {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

/** Applies missing migrations in one IMMEDIATE transaction (two openers serialise; the second applies none). */
export function migrateLedger(
  db: Database.Database,
  migrations: readonly LedgerMigration[] = LEDGER_MIGRATIONS,
): number[] {
  const apply = db.transaction(() => {
    sql.createMigrationsTable(db);
    const applied = new Set(sql.selectMigrations(db));
    const known = new Set(migrations.map((m) => m.id));
    const unknown = [...applied].filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new TerminusError('internal', `ledger has migrations this code does not know: ${unknown.join(', ')}`);
    }
    const missing = migrations.filter((m) => !applied.has(m.id)).sort((a, b) => a.id - b.id);
    for (const migration of missing) {
      db.exec(migration.sql);
      sql.insertMigration(db, migration.id, migration.name);
    }
    return missing.map((m) => m.id);
  });
  return apply.immediate();
}

function mapError(error: unknown): unknown {
  if (error instanceof TerminusError) return error;
  if (error instanceof SqliteError && error.code.startsWith('SQLITE_BUSY')) {
    return new TerminusError('unavailable', 'ledger database is busy', { cause: error });
  }
  if (error instanceof SqliteError && error.code.startsWith('SQLITE_CONSTRAINT')) {
    return new TerminusError('operation_conflict', 'ledger constraint violated', { cause: error });
  }
  // SQLite's own words and code (a full disk is SQLITE_FULL): the ledger's refusal reaches a person.
  const detail = error instanceof SqliteError ? `${error.message} (${error.code})` : String(error);
  return new TerminusError('internal', `ledger error: ${detail}`, { cause: error });
}
