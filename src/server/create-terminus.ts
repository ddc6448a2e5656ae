import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { McpServer, Server } from '@modelcontextprotocol/server';
import { TerminusError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { createEngine, type EngineOptions } from '../runner/engine.js';
import type { TaskEngine } from '../runner/engine-port.js';
import type { TaskToolDefinition } from '../runner/tool.js';
import type { TaskEvents } from '../store/events.js';
import type { TaskStore } from '../store/port.js';
import { anonymousCapabilities } from './anonymous.js';
import { checkedInput } from './input-checks.js';
import { installTerminus, resolveInstallContext, type InstallContext } from './install.js';
import type { Preflight } from './preflight.js';
import { defaultPreflightStateSeal, preflightStateSeal } from './preflight-state.js';
import { stderrLogger } from './stderr-logger.js';
import type { WireAdapter } from './wire/adapter.js';
import { createWireRegistry } from './wire/registry.js';

/** What `createTerminus` takes. Only `db` and `tools` are required. */
export interface CreateTerminusOptions {
  /**
   * Where tasks live: a SQLite file path (its folder is created), a `postgres://` /
   * `postgresql://` URL (several nodes on one database; LISTEN/NOTIFY wakes the other nodes), or an
   * open `TaskStore` (closed by `close()` too).
   */
  readonly db: string | TaskStore;
  /** The durable task tools (`defineTaskTool`). Names MUST be unique and differ from plain tools'. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a tool's Args type is erased here
  readonly tools: readonly TaskToolDefinition<any, any>[];
  /** Default: JSON lines on stderr, `warn` and up (a handler crash is logged with task id and epoch). */
  readonly logger?: Logger;
  /** Wires `install` serves; default every wire that lives on MCP (2026-07-28 Tasks extension, 2025-11-25 tasks, SEP-1391). */
  readonly wires?: readonly WireAdapter[];
  /** MRTR rounds to run before a tool's task is created, by tool name. */
  readonly preflights?: Readonly<Record<string, Preflight>>;
  /** The key that signs preflight state (see `TerminusServerOptions.preflightStateKey`); default per process. */
  readonly preflightStateKey?: string | Uint8Array;
  /** PostgreSQL schema of the tables (the same on every node). Default `terminus`. */
  readonly pgSchema?: string;
  /** Engine settings beyond the defaults (lease, concurrency, TTLs; a test clock). */
  readonly engine?: Omit<EngineOptions, 'store' | 'tools' | 'logger' | 'events'>;
}

/** Durable task tools for a server the author already has. */
export interface Terminus {
  /** The running engine (submit, get, cancel, list from code; its `tools`). */
  readonly engine: TaskEngine;
  /**
   * Adds the task tools and the task methods to one SDK instance (`McpServer` or low-level
   * `Server`), after the author registered their own tools, resources and prompts; returns it.
   * Call it in the per-request (HTTP) or per-connection (stdio) factory and pass the factory's
   * context, so a 2025-era instance gets the 2025 wires. Plain tools keep working as before.
   */
  install<S extends McpServer | Server>(server: S, context?: InstallContext): S;
  /** Stops the engine (running tasks keep their state and resume on the next start), then the store. */
  close(): Promise<void>;
}

// LISTEN runs on a fresh connection right after the store proved the server reachable; if it has not
// happened in this long, something is wrong that waiting longer would only hide.

/**
 * Opens the task store, starts an engine (system clock, ids and random; a stderr logger) and returns
 * `install` for the author's own SDK server, which they keep serving their way (`createMcpHandler`,
 * Hono, Express, stdio).
 * @example
 * import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
 * import { createTerminus } from 'mcp-terminus';
 *
 * const terminus = await createTerminus({ db: './tasks.db', tools: [report] });
 * const handler = createMcpHandler((ctx) => {
 *   const server = new McpServer({ name: 'reports', version: '1.0.0' });
 *   server.registerTool('ping', { description: 'pong' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
 *   return terminus.install(server, ctx);
 * });
 * process.on('SIGTERM', () => void terminus.close());
 */
export async function createTerminus(options: CreateTerminusOptions): Promise<Terminus> {
  const logger = options.logger ?? stderrLogger();
  const opened = await openDb(options, logger);
  let engine: TaskEngine;
  try {
    engine = createEngine({
      ...options.engine,
      store: opened.store,
      tools: options.tools,
      logger,
      ...(opened.events === undefined ? {} : { events: opened.events }),
    });
  } catch (error) {
    await opened.close();
    throw error;
  }
  engine.start();
  const wires = options.wires ?? createWireRegistry().adapters;
  const preflights = new Map(Object.entries(options.preflights ?? {}));
  const preflightState =
    options.preflightStateKey === undefined
      ? defaultPreflightStateSeal()
      : preflightStateSeal(options.preflightStateKey);
  // The same anonymous-caller policy and nesting bound as createTerminusServer's wires get.
  const served = anonymousCapabilities(checkedInput(engine));
  let closing: Promise<void> | undefined;
  return {
    engine,
    install: (server, context) => {
      const { era, transport } = resolveInstallContext(context);
      return installTerminus(server, { engine: served, wires, preflights, preflightState, logger, transport }, era);
    },
    close: () => {
      closing ??= engine.stop().then(() => opened.close());
      return closing;
    },
  };
}

interface OpenedDb {
  readonly store: TaskStore;
  readonly events: TaskEvents | undefined;
  close(): Promise<void>;
}

async function openDb(options: CreateTerminusOptions, logger: Logger): Promise<OpenedDb> {
  const { db } = options;
  if (typeof db !== 'string') return { store: db, events: undefined, close: () => db.close() };
  if (/^postgres(ql)?:\/\//i.test(db)) return openPostgres(db, options.pgSchema, logger);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(db);
  if (scheme !== null) {
    throw new TerminusError(
      'invalid_argument',
      `unsupported database URL scheme ${scheme[1]}: (use postgres://, postgresql:// or a SQLite file path)`,
    );
  }
  // Loaded here, not at the top: an author on PostgreSQL never loads the native SQLite module.
  const { openSqliteTaskStore } = await import('../store/sqlite/index.js');
  if (db !== ':memory:') await mkdir(dirname(db), { recursive: true });
  const store = await openSqliteTaskStore({ path: db });
  return { store, events: undefined, close: () => store.close() };
}

async function openPostgres(url: string, schema: string | undefined, logger: Logger): Promise<OpenedDb> {
  const { openPostgresBackend } = await import('../store/postgres/index.js');
  return openPostgresBackend({
    connectionString: url,
    applicationName: 'mcp-terminus',
    logger,
    ...(schema === undefined ? {} : { schema }),
  });
}
