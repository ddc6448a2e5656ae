import { Command, InvalidArgumentError, Option } from 'commander';
import type { Logger } from '../core/ports.js';
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import { createEngine } from '../runner/engine.js';
import type { TaskToolDefinition } from '../runner/tool.js';
import type { Preflight } from '../server/preflight.js';
import { createTerminusServer } from '../server/terminus-server.js';
import { createWireRegistry, parseWireName } from '../server/wire/registry.js';
import type { WireName } from '../core/task.js';
import { clusterTools } from '../tools/cluster/index.js';
import { conformancePreflights, conformanceTools } from '../tools/conformance/index.js';
import { demoTools } from '../tools/demo/index.js';
import { defaultNodeId, openStoreOrExit } from './open-store.js';
import { listenErrorMessage, probeListen } from './listen-check.js';

interface ServeFlags {
  readonly host: string;
  readonly port: number;
  readonly db: string;
  readonly stdio: boolean;
  readonly fixtures?: 'conformance' | 'cluster';
  readonly nodeId: string;
  readonly pgSchema?: string;
  readonly verbose: boolean;
  readonly disableWire: WireName[];
}

/**
 * `terminus serve`: the demo (or fixture) tools on a SQLite or PostgreSQL store, over HTTP or stdio.
 * stdout carries exactly one line (where it listens) in HTTP mode and only protocol messages in
 * stdio mode; logs go to stderr.
 */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Serve durable MCP tools over Streamable HTTP (2026-07-28 Tasks extension) or stdio')
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--port <port>', 'port to bind (0 picks a free one)', parsePort, 3000)
    .option(
      '--db <file|url>',
      'SQLite database file, or postgres:// URL shared by several nodes',
      './.terminus/terminus.db',
    )
    .option(
      '--node-id <id>',
      'this node: lease owner and PostgreSQL application_name (unique per node)',
      defaultNodeId(),
    )
    .option('--pg-schema <name>', 'PostgreSQL schema of the tables (the same on every node)')
    .option('--stdio', 'serve one client over stdin/stdout instead of HTTP', false)
    .addOption(
      new Option('--fixtures <set>', 'serve a fixture tool set instead of the demo tools').choices([
        'conformance',
        'cluster',
      ]),
    )
    .option('--verbose', 'debug logs on stderr', false)
    .option(
      '--disable-wire <wire>',
      'refuse new submissions on a wire (repeatable); its existing tasks keep status, result, cancel and list',
      collectWire,
      [],
    )
    .action((flags: ServeFlags) => serve(flags));
}

function collectWire(value: string, previous: WireName[]): WireName[] {
  try {
    return [...previous, parseWireName(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('not a port number');
  return port;
}

async function serve(flags: ServeFlags): Promise<void> {
  const logger = stderrLogger(flags.verbose);
  // Bind first: a port in use or a bad --host must not leave a new database file behind.
  if (!flags.stdio) await probeListen(flags.host, flags.port).catch(failServe);
  const opened = await openStoreOrExit({ db: flags.db, nodeId: flags.nodeId, pgSchema: flags.pgSchema, logger });
  const { store } = opened;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tools keep their own Args types
  let tools: readonly TaskToolDefinition<any>[] = demoTools({ dataDir: opened.dataDir });
  let preflights: Readonly<Record<string, Preflight>> = {};
  if (flags.fixtures === 'conformance') {
    tools = conformanceTools;
    preflights = conformancePreflights;
  }
  if (flags.fixtures === 'cluster') tools = clusterTools({ dataDir: opened.dataDir });
  const engine = createEngine({
    store,
    events: opened.events,
    nodeId: flags.nodeId,
    tools,
    clock: systemClock,
    ids: systemIds,
    random: systemRandom,
    logger,
  });
  engine.start();
  // Every wire is served; disabled ones only refuse new submissions (seed 002).
  const wires = createWireRegistry({ disabled: flags.disableWire });
  const server = createTerminusServer({
    engine: wires.guard(engine),
    wires: wires.adapters,
    name: 'mcp-terminus',
    version: '0.1.0',
    preflights,
    logger,
  });

  let close: () => Promise<void>;
  if (flags.stdio) {
    const stdio = server.serveStdio();
    close = () => stdio.close();
    logger.info(`terminus serving stdio (db ${opened.label})`);
  } else {
    const http = await server
      .serveHttp({ host: flags.host, port: flags.port })
      .catch((error: unknown) => failServe(new Error(listenErrorMessage(flags.host, flags.port, error))));
    close = () => http.close();
    process.stdout.write(`terminus listening on ${http.url} (db ${opened.label})\n`);
  }

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      logger.warn(`second ${signal}: exiting now`);
      process.exit(1);
    }
    stopping = true;
    logger.info(`${signal}: stopping (running tasks keep their state and resume on the next start)`);
    // Stop taking requests, then stop the runners (they release their leases), then events and store.
    close()
      .then(() => engine.stop())
      .then(() => opened.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error('shutdown failed', { error: String(error) });
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** One line on stderr, exit 1: what a person sees instead of a stack trace. */
function failServe(error: unknown): never {
  process.stderr.write(`terminus serve: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

/** One line per entry on stderr: `level message {fields}`. */
function stderrLogger(verbose: boolean): Logger {
  const write = (level: string, message: string, fields?: Record<string, unknown>): void => {
    const extra = fields === undefined || Object.keys(fields).length === 0 ? '' : ` ${JSON.stringify(fields)}`;
    process.stderr.write(`${new Date().toISOString()} ${level} ${message}${extra}\n`);
  };
  return {
    debug: (m, f) => {
      if (verbose) write('debug', m, f);
    },
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}
