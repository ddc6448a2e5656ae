import Database from 'better-sqlite3';
import { SqliteError } from 'better-sqlite3';
import { TerminusError } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/ports.js';
import { damageOf, openCheckedDatabase } from '../../sql/sqlite-open.js';
import type { AppendBound, TaskStore } from '../port.js';
import { checkEventBound, type EventBound } from '../../core/task-events.js';
import { claimTasks } from './claim.js';
import { cancelTask, respondTask } from './client-writes.js';
import { createTask } from './create.js';
import { finish } from './finish.js';
import { checkCommitDelay, createWriteQueue, type CommitReport } from './group-commit.js';
import { lookupKey } from './keys.js';
import { readEvents } from './event-read.js';
import { sqliteOutbox } from './outbox.js';
import { appendLog, readLog } from './log.js';
import { checkSchema } from './integrity.js';
import { migrate } from './migrate.js';
import { countOwners, renameOwners } from './owners.js';
import { countByStatus, getTask, listTasks } from './read.js';
import { countLive, sweepExpired, sweepTombstones } from './sweep.js';
import { checkpoint, heartbeat, progress, release, requestInput } from './worker-writes.js';

/** A runner's or a sweep's write: no caller waits on its answer to send the next request (`WriteQueue.enqueue`). */
const PATIENT = true;

export interface SqliteTaskStoreOptions {
  /** A file path, or `':memory:'` for a private, non-durable database (tests). */
  readonly path: string;
  /** How long a write waits for another process's write lock before `unavailable`. Default 5000. */
  readonly busyTimeoutMs?: number;
  /**
   * Most writes per group-commit transaction. Default 512. `1` gives one transaction (and one
   * fsync) per write: only for measuring what group commit buys.
   */
  readonly maxBatch?: number;
  /**
   * How long a group commit holding only a runner's writes (finishes, progress, logs, heartbeats,
   * releases) waits for a caller's write to share its fsync. Default 1 ms (`DEFAULT_COMMIT_DELAY_MS`);
   * 0 commits every batch at the end of its event-loop turn. A caller's write never waits. MUST be
   * an integer from 0 to 100: anything else is refused with `invalid_argument` (a longer delay
   * would hold a finish past the executor's next poll, and heartbeats toward their lease's end).
   */
  readonly commitDelayMs?: number;
  /**
   * At open the file's header, a `quick_check` and the schema are checked (a damaged database is
   * refused with `storage_damaged`); `'full'` runs the slower `integrity_check` instead.
   */
  readonly integrityCheck?: 'quick' | 'full';
  /** Where a damaged WAL that SQLite is about to discard is reported (as an error). */
  readonly logger?: Logger;
  /**
   * Called after each group-commit transaction with its write count, time and success (metrics:
   * `createMetrics().commit`). MUST NOT throw or block: it runs on the write path.
   */
  readonly onCommit?: (report: CommitReport) => void;
  /** How many progress and log events each task keeps (its newest). Default `DEFAULT_EVENT_BOUND` (10,000). */
  readonly eventBound?: EventBound;
  /** Told how many events one write dropped past `eventBound` (metrics). MUST NOT throw: it runs on the write path. */
  readonly onEventsDropped?: (count: number) => void;
}

/**
 * Opens (creating and migrating if needed) a SQLite `TaskStore` on better-sqlite3: WAL,
 * `synchronous=FULL` (a resolved write survives power loss and `kill -9`, S1/S9), group commit for
 * writes, direct reads. One store per file per process; several processes may share a file (they
 * serialise on SQLite's write lock, waiting up to `busyTimeoutMs`).
 *
 * @example
 * ```ts
 * import { openSqliteTaskStore } from 'mcp-terminus/sqlite';
 * const store = await openSqliteTaskStore({ path: '.terminus/tasks.db' });
 * // ... hand it to the engine; on shutdown:
 * await store.close();
 * ```
 */
export async function openSqliteTaskStore(options: SqliteTaskStoreOptions): Promise<TaskStore> {
  const eventBound: AppendBound = {
    ...checkEventBound(options.eventBound),
    ...(options.onEventsDropped === undefined ? {} : { onDropped: options.onEventsDropped }),
  };
  const commitDelayMs = checkCommitDelay(options.commitDelayMs);
  let db: Database.Database;
  try {
    db = openCheckedDatabase(options.path, {
      timeoutMs: options.busyTimeoutMs ?? 5000,
      logger: options.logger ?? silentLogger,
      full: options.integrityCheck === 'full',
    });
  } catch (error) {
    throw openError(options.path, error);
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    migrate(db);
    checkSchema(db, options.path);
  } catch (error) {
    db.close();
    throw openError(options.path, error);
  }
  const queue = createWriteQueue(db, {
    maxBatch: Math.max(1, options.maxBatch ?? 512),
    mapError,
    ...(options.onCommit === undefined ? {} : { onCommit: options.onCommit }),
    commitDelayMs,
  });
  let closed = false;
  const read = async <T>(op: () => T): Promise<T> => {
    if (closed) throw new TerminusError('unavailable', 'task store is closed');
    try {
      return op();
    } catch (error) {
      throw mapError(error);
    }
  };
  return {
    create: (input) => queue.enqueue(() => createTask(db, input)),
    get: (owner, id, now) => read(() => getTask(db, owner, id, now)),
    lookupKey: (owner, key, now) => queue.enqueue(() => lookupKey(db, owner, key, now)),
    list: (owner, query, now) => read(() => listTasks(db, owner, query, now)),
    listAllOwners: (query, now) => read(() => listTasks(db, null, query, now)),
    countByStatus: (now) => read(() => countByStatus(db, now)),
    cancel: (owner, id, now) => queue.enqueue(() => cancelTask(db, owner, id, now)),
    respond: (owner, id, responses, now) => queue.enqueue(() => respondTask(db, owner, id, responses, now)),
    claim: (request) => queue.enqueue(() => claimTasks(db, request)),
    heartbeat: (fence, leaseMs, now) => queue.enqueue(() => heartbeat(db, fence, leaseMs, now), PATIENT),
    progress: (fence, value, now) => queue.enqueue(() => progress(db, fence, value, now, eventBound), PATIENT),
    checkpoint: (fence, data, now) => queue.enqueue(() => checkpoint(db, fence, data, now), PATIENT),
    requestInput: (fence, key, request, now) => queue.enqueue(() => requestInput(db, fence, key, request, now)),
    finish: (fence, outcome, now) => queue.enqueue(() => finish(db, fence, outcome, now), PATIENT),
    appendLog: (fence, lines, bound, now, skipped) =>
      queue.enqueue(() => appendLog(db, fence, lines, bound, now, skipped, eventBound), PATIENT),
    readLog: (owner, id, query, now) => read(() => readLog(db, owner, id, query, now)),
    readEvents: (owner, id, query, now) => read(() => readEvents(db, owner, id, query, now)),
    release: (fence) => queue.enqueue(() => release(db, fence), PATIENT),
    sweepExpired: (now, limit) => queue.enqueue(() => sweepExpired(db, now, limit), PATIENT),
    sweepTombstones: (before, limit) => queue.enqueue(() => sweepTombstones(db, before, limit), PATIENT),
    countLive: (owner) => read(() => countLive(db, owner)),
    countOwners: (prefix) => read(() => countOwners(db, prefix)),
    renameOwners: (from, to) => queue.enqueue(() => renameOwners(db, from, to)),
    webhooks: sqliteOutbox(db, (op) => queue.enqueue(op), read),
    callerWaiting: (waiting) => queue.callerWaiting(waiting),
    close: async () => {
      if (closed) return;
      closed = true;
      await queue.drain();
      db.close();
    },
  };
}

/** At open: SQLite's refusals (not a database, malformed, unreadable) name the file and the cause. */
function openError(path: string, error: unknown): unknown {
  if (error instanceof TerminusError) return error;
  const damage = damageOf(path, error);
  if (damage !== undefined) return damage;
  if (error instanceof SqliteError && !error.code.startsWith('SQLITE_BUSY')) {
    return new TerminusError('internal', `${path}: ${error.message}`, { cause: error, details: { path } });
  }
  return mapError(error);
}

/** Our own errors pass through; a busy database is retryable; anything else is `internal`. */
function mapError(error: unknown): unknown {
  if (error instanceof TerminusError) return error;
  if (error instanceof SqliteError && (error.code === 'SQLITE_BUSY' || error.code.startsWith('SQLITE_BUSY_'))) {
    return new TerminusError('unavailable', 'database is busy', { cause: error });
  }
  // A full disk (or quota) rolled the transaction back: nothing was written, and the same write
  // succeeds once space is freed, so the caller should retry, not see an internal error.
  if (error instanceof SqliteError && error.code === 'SQLITE_FULL') {
    return new TerminusError('unavailable', 'database or disk is full', { cause: error });
  }
  return new TerminusError('internal', 'task store error', { cause: error });
}
