import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { TerminusError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import type { EventBound } from '../core/task-events.js';
import type { TaskEvents } from '../store/events.js';
import type { TaskStore } from '../store/port.js';
import { openPostgresBackend } from '../store/postgres/index.js';
import { openSqliteTaskStore } from '../store/sqlite/index.js';
import type { CommitReport } from '../store/sqlite/index.js';
import { checkWritableFile, diskNote, PathError, sqliteOpenMessage } from './paths.js';

/** What `terminus serve` needs to pick its store. */
export interface StoreChoice {
  /** A SQLite file path, or a `postgres://` / `postgresql://` URL. */
  readonly db: string;
  /** This node's name: its lease owner and, on PostgreSQL, its `application_name`. */
  readonly nodeId: string;
  /** PostgreSQL schema of the tables; every node of one deployment MUST use the same. */
  readonly pgSchema?: string;
  readonly logger: Logger;
  /** SQLite: `'full'` runs `integrity_check` at open instead of `quick_check`. */
  readonly integrityCheck?: 'quick' | 'full';
  /** SQLite: reports each group-commit transaction (PostgreSQL commits every write on its own). */
  readonly onCommit?: (report: CommitReport) => void;
  /** `--max-task-events`: the progress and log events each task keeps (default 10,000). */
  readonly eventBound?: EventBound;
  /** Told how many events a write dropped past the bound (`terminus_task_events_dropped_total`). */
  readonly onEventsDropped?: (count: number) => void;
}

/** An open store with what goes with it. */
export interface OpenedStore {
  readonly store: TaskStore;
  /** Cross-node wake-ups (LISTEN/NOTIFY) on PostgreSQL; undefined: the engine's in-process events. */
  readonly events: TaskEvents | undefined;
  /** Where file-writing tools keep their files: beside the SQLite file, `./.terminus/data` otherwise. */
  readonly dataDir: string;
  /** The database as messages show it: the path, or the URL without its password. */
  readonly label: string;
  /** Closes the events, then the store. Call after the engine has stopped. */
  close(): Promise<void>;
}

export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/** `hostname-pid`: distinct for every process, readable in `pg_stat_activity` and lease owners. */
export function defaultNodeId(): string {
  return `${hostname()}-${process.pid}`;
}

/**
 * Opens the store `--db` names: SQLite for a file path (its folder is created), PostgreSQL for a
 * `postgres://` URL (migrations applied, LISTEN/NOTIFY events listening before this resolves).
 * Rejects a `TerminusError` whose message is one line: `unavailable` when PostgreSQL cannot be
 * reached, `invalid_argument` for an unsupported server version or URL scheme.
 */
export async function openStore(choice: StoreChoice): Promise<OpenedStore> {
  const { db } = choice;
  if (isPostgresUrl(db)) return openPostgres(choice);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(db);
  if (scheme !== null) {
    throw new TerminusError(
      'invalid_argument',
      `unsupported database URL scheme ${scheme[1]}: (use postgres://, postgresql:// or a SQLite file path)`,
    );
  }
  await checkWritableFile(db, 'database');
  let store: TaskStore;
  try {
    store = await openSqliteTaskStore({
      path: db,
      logger: choice.logger,
      integrityCheck: choice.integrityCheck ?? 'quick',
      ...(choice.onCommit === undefined ? {} : { onCommit: choice.onCommit }),
      ...boundOf(choice),
    });
  } catch (error) {
    const disk = diskNote(db, error);
    const message =
      sqliteOpenMessage(db, 'database', error) ??
      (disk === '' ? undefined : `database ${namedFile(db, (error as Error).message)}${disk}`);
    throw message === undefined ? error : new PathError(message);
  }
  return { store, events: undefined, dataDir: `${dirname(db)}/data`, label: db, close: () => store.close() };
}

async function openPostgres(choice: StoreChoice): Promise<OpenedStore> {
  const { db, nodeId, logger } = choice;
  const backend = await openPostgresBackend({
    connectionString: db,
    applicationName: `terminus ${nodeId}`,
    logger,
    ...(choice.pgSchema === undefined ? {} : { schema: choice.pgSchema }),
    ...boundOf(choice),
  });
  return { ...backend, dataDir: join('.terminus', 'data'), label: redact(db) };
}

function boundOf(choice: StoreChoice): Pick<StoreChoice, 'eventBound' | 'onEventsDropped'> {
  return {
    ...(choice.eventBound === undefined ? {} : { eventBound: choice.eventBound }),
    ...(choice.onEventsDropped === undefined ? {} : { onEventsDropped: choice.onEventsDropped }),
  };
}

/**
 * `openStore` for the CLI: on failure writes `terminus serve: <reason>` to stderr and exits 1, so
 * an operator sees one line, not a stack.
 */
export async function openStoreOrExit(choice: StoreChoice, command = 'serve'): Promise<OpenedStore> {
  try {
    return await openStore(choice);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`terminus ${command}: ${message.replaceAll('\n', ' ')}\n`);
    process.exit(1);
  }
}

/** The URL with its password (if any) replaced, for logs and the listening line. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** `FILE: message`, once: the store's own messages already begin with the file. */
function namedFile(file: string, message: string): string {
  return message.startsWith(`${file}: `) ? message : `${file}: ${message}`;
}
