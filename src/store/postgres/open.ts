import type { Clock, Logger } from '../../core/ports.js';
import { systemClock } from '../../core/system.js';
import { createBatcher } from '../../sql/pg-batch.js';
import { createDb } from '../../sql/pg-db.js';
import { mapError } from '../../sql/pg-errors.js';
import { migrate } from '../../sql/pg-migrate.js';
import { checkServer, poolFor, type ConnectOptions } from '../../sql/pg-pool.js';
import type { TaskRecord } from '../../core/task.js';
import { checkEventBound, type EventBound } from '../../core/task-events.js';
import type { AppendBound, CreateOutcome, FinishOutcome, NewTask, TaskStore } from '../port.js';
import { claimTasks } from './claim.js';
import { cancelTask, respondTask } from './client-writes.js';
import { createAlone, createTasks, lookupKey } from './create.js';
import { tablesOf } from './db.js';
import { finishTasks, type FinishItem, type FinishQuery } from './finish.js';
import { readEvents } from './event-read.js';
import { postgresOutbox } from './outbox.js';
import { appendLog, readLog } from './log.js';
import { MIGRATIONS } from './migrations/index.js';
import { countOwners, renameOwners } from './owners.js';
import { countByStatus, getTask, getTasks, listTasks, type GetItem } from './read.js';
import { checkSchema } from './schema-check.js';
import { countLive, sweepExpired, sweepTombstones } from './sweep.js';
import {
  checkpoint,
  heartbeat,
  heartbeatTasks,
  progress,
  release,
  requestInput,
  type HeartbeatItem,
} from './worker-writes.js';

export interface PostgresTaskStoreOptions extends ConnectOptions {
  /** Schema holding the tables; created when missing. Default `terminus`. */
  readonly schema?: string;
  /** Only stamps `schema_migrations.applied_at`; every task time comes from the caller's `now`. */
  readonly clock?: Clock;
  readonly logger?: Logger;
  /**
   * Prepare each statement once per connection (default true). Turn it off behind a pooler that
   * does not keep prepared statements (PgBouncer in transaction mode before 1.21).
   */
  readonly preparedStatements?: boolean;
  /** How many progress and log events each task keeps (its newest). Default `DEFAULT_EVENT_BOUND` (10,000). */
  readonly eventBound?: EventBound;
  /** Told how many events one write dropped past `eventBound` (metrics). MUST NOT throw. */
  readonly onEventsDropped?: (count: number) => void;
}

/**
 * Creates, terminal writes and heartbeats of one event-loop turn go as one statement each
 * (`createBatcher`). Up to 256 rows a statement; two statements of a kind in flight at once, so a
 * batch committing does not hold up the next one's round trip (see docs/postgres.md, "What a create and a finish cost").
 */
const MAX_BATCH = 256;
const BATCHES_IN_FLIGHT = 2;
/** Reads commit nothing: more of them may overlap, each on its own connection. */
const READS_IN_FLIGHT = 4;

/**
 * Opens a PostgreSQL `TaskStore` shared by any number of server nodes: checks the server (reachable,
 * version 13 or newer), applies the missing migrations under an advisory lock (nodes starting
 * together apply them once), and returns the store. Claims use `FOR UPDATE SKIP LOCKED`; every
 * worker write is fenced by lease owner and epoch; a submission key is one row under a primary key,
 * so two nodes racing on it create one task.
 *
 * Rejects `unavailable` (with the driver's error as `cause`) when the database cannot be reached,
 * `invalid_argument` when the server is older than 13. Later operations reject `unavailable` when
 * the connection fails mid-way (retry them), `internal` for anything else the database refuses.
 *
 * @example
 * ```ts
 * import { openPostgresTaskStore } from 'mcp-terminus/postgres';
 * const store = await openPostgresTaskStore({ connectionString: 'postgres://terminus@db.internal/terminus' });
 * // ... hand it to the engine; on shutdown:
 * await store.close();
 * ```
 */
export async function openPostgresTaskStore(options: PostgresTaskStoreOptions): Promise<TaskStore> {
  const eventBound: AppendBound = {
    ...checkEventBound(options.eventBound),
    ...(options.onEventsDropped === undefined ? {} : { onDropped: options.onEventsDropped }),
  };
  const connection = poolFor(options, 'mcp-terminus');
  let closed = false;
  const db = createDb(connection.pool, tablesOf(options.schema ?? 'terminus'), () => closed, {
    prepared: options.preparedStatements ?? true,
  });
  try {
    const { version } = await checkServer(connection);
    const applied = await migrate(db, 'tasks', MIGRATIONS, (options.clock ?? systemClock).now());
    await checkSchema(db, options.schema ?? 'terminus');
    options.logger?.info('postgres task store ready', { target: connection.target, version, applied });
  } catch (error) {
    if (connection.owned) await connection.pool.end().catch(() => undefined);
    throw error;
  }
  const creates = createBatcher<NewTask, CreateOutcome>({
    maxBatch: MAX_BATCH,
    maxInFlight: BATCHES_IN_FLIGHT,
    batch: (items) => createTasks(db, items),
    single: (item) => createAlone(db, item),
    mapError: (error) => mapError(error, 'create'),
  });
  const autocommit: FinishQuery = { query: (sql, params, query) => db.query('finish', sql, params, query) };
  const finishes = createBatcher<FinishItem, FinishOutcome>({
    maxBatch: MAX_BATCH,
    maxInFlight: BATCHES_IN_FLIGHT,
    batch: (items) => finishTasks(autocommit, items),
    single: async (item) => {
      const [outcome] = await finishTasks(autocommit, [item]);
      if (outcome?.ok !== true) throw outcome?.error;
      return outcome.value;
    },
    mapError: (error) => mapError(error, 'finish'),
  });
  // Reads batch too: a turn's gets (16 clients polling) are one statement, not 16 round trips.
  const gets = createBatcher<GetItem, TaskRecord | null>({
    maxBatch: MAX_BATCH,
    maxInFlight: READS_IN_FLIGHT,
    batch: (items) => getTasks(db, items),
    single: (item) => getTask(db, item.owner, item.id, item.now),
    mapError: (error) => mapError(error, 'get'),
  });
  // A node's runs that started together beat together: one statement, not one per run.
  const heartbeats = createBatcher<HeartbeatItem, TaskRecord>({
    maxBatch: MAX_BATCH,
    maxInFlight: BATCHES_IN_FLIGHT,
    batch: (items) => heartbeatTasks(db, items),
    single: (item) => heartbeat(db, item.fence, item.leaseMs, item.now),
    mapError: (error) => mapError(error, 'heartbeat'),
  });
  return {
    create: (input) => creates.run(input),
    get: (owner, id, now) => gets.run({ owner, id, now }),
    lookupKey: (owner, key, now) => lookupKey(db, owner, key, now),
    list: (owner, query, now) => listTasks(db, owner, query, now),
    listAllOwners: (query, now) => listTasks(db, null, query, now),
    countByStatus: (now) => countByStatus(db, now),
    cancel: (owner, id, now) => cancelTask(db, owner, id, now),
    respond: (owner, id, responses, now) => respondTask(db, owner, id, responses, now),
    claim: (request) => claimTasks(db, request),
    heartbeat: (fence, leaseMs, now) => heartbeats.run({ fence, leaseMs, now }),
    progress: (fence, value, now) => progress(db, fence, value, now, eventBound),
    checkpoint: (fence, data, now) => checkpoint(db, fence, data, now),
    requestInput: (fence, key, request, now) => requestInput(db, fence, key, request, now),
    finish: (fence, outcome, now) => finishes.run({ fence, outcome, now }),
    appendLog: (fence, lines, bound, now, skipped) => appendLog(db, fence, lines, bound, now, skipped, eventBound),
    readLog: (owner, id, query, now) => readLog(db, owner, id, query, now),
    readEvents: (owner, id, query, now) => readEvents(db, owner, id, query, now),
    release: (fence) => release(db, fence),
    sweepExpired: (now, limit) => sweepExpired(db, now, limit),
    sweepTombstones: (before, limit) => sweepTombstones(db, before, limit),
    countLive: (owner) => countLive(db, owner),
    countOwners: (prefix) => countOwners(db, prefix),
    renameOwners: (from, to) => renameOwners(db, from, to),
    webhooks: postgresOutbox(db),
    close: async () => {
      if (closed) return;
      await Promise.all([creates.drain(), finishes.drain(), gets.drain(), heartbeats.drain()]);
      closed = true;
      if (connection.owned) await connection.pool.end();
    },
  };
}
