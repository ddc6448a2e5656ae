import type { EventBound } from '../../core/task-events.js';
import { TerminusError } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';
import type { TaskEvents } from '../events.js';
import type { TaskStore } from '../port.js';
import { createPostgresEvents } from './events.js';
import { openPostgresTaskStore } from './open.js';

/** A PostgreSQL store with its LISTEN/NOTIFY events, as one node of a deployment uses them. */
export interface PostgresBackend {
  readonly store: TaskStore;
  readonly events: TaskEvents;
  /** Closes the events, then the store. */
  close(): Promise<void>;
}

/** What `openPostgresBackend` connects with. */
export interface PostgresBackendOptions {
  readonly connectionString: string;
  /** `application_name` of the store's pool; the listener's gets ` events` appended. */
  readonly applicationName: string;
  /** Schema of the tables; every node of one deployment MUST use the same. Default `terminus`. */
  readonly schema?: string;
  /** Size of the store's pool (the listener has its own, of 3). Default 10. */
  readonly maxConnections?: number;
  readonly logger: Logger;
  /**
   * How long the listener may take to start LISTEN before the open fails `unavailable`; 10 s. It
   * runs on a fresh connection right after the store proved the server reachable: if it has not
   * started in this long, something is wrong that a retry loop would only hide.
   */
  readonly listenTimeoutMs?: number;
  /** The per-task bound on progress and log events and its drop counter (`PostgresTaskStoreOptions`). */
  readonly eventBound?: EventBound;
  readonly onEventsDropped?: (count: number) => void;
}

/**
 * Opens the store (migrations applied) and starts its cross-node wake-ups, failing `unavailable`
 * when LISTEN does not start in time; on any failure nothing is left open.
 * @example
 * const { store, events, close } = await openPostgresBackend({ connectionString, applicationName: 'node-a', logger });
 * const engine = createEngine({ store, events, tools });
 */
export async function openPostgresBackend(options: PostgresBackendOptions): Promise<PostgresBackend> {
  const { connectionString, applicationName, logger } = options;
  const timeoutMs = options.listenTimeoutMs ?? 10_000;
  const store = await openPostgresTaskStore({
    connectionString,
    applicationName,
    logger,
    ...(options.schema === undefined ? {} : { schema: options.schema }),
    ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    ...(options.eventBound === undefined ? {} : { eventBound: options.eventBound }),
    ...(options.onEventsDropped === undefined ? {} : { onEventsDropped: options.onEventsDropped }),
  });
  const events = createPostgresEvents({ connectionString, applicationName: `${applicationName} events`, logger });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new TerminusError('unavailable', `PostgreSQL LISTEN did not start within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([events.ready(), timeout]);
  } catch (error) {
    await events.close();
    await store.close();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return {
    store,
    events,
    close: async () => {
      await events.close();
      await store.close();
    },
  };
}
