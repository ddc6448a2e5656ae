import { startDelivery, webhookOptions, webhookSettings, type WebhookFlags } from './serve-webhooks.js';
import { Command, InvalidArgumentError, Option } from 'commander';
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import { createEngine } from '../runner/engine.js';
import { DEFAULT_EVENT_BOUND } from '../core/task-events.js';
import { DEFAULT_MAX_POLL_INTERVAL_MS } from '../runner/poll-interval.js';
import type { TaskToolDefinition } from '../runner/tool.js';
import type { Preflight } from '../server/preflight.js';
import { createTerminusServer } from '../server/terminus-server.js';
import { adoptOwnersAtStart, LEGACY_OWNERS, operatorPrincipals, serveAuth, type AuthFlags } from './serve-auth.js';
import { DEFAULT_LIMITS } from '../server/limits.js';
import { createWireRegistry, parseWireName } from '../server/wire/registry.js';
import type { WireName } from '../core/task.js';
import { clusterTools } from '../tools/cluster/index.js';
import { conformancePreflights, conformanceTools } from '../tools/conformance/index.js';
import { demoTools } from '../tools/demo/index.js';
import { hostileTools } from '../tools/hostile/index.js';
import { defaultNodeId, openStoreOrExit } from './open-store.js';
import { exitOnSignals } from './signals.js';
import { addWorkerOptions, checkWorkerFlags, workerEngineOptions, type WorkerFlags } from './handler-workers.js';
import { consoleRoutes } from '../console/routes.js';
import { verifyBearer } from '../console/sign-in.js';
import { timelineRecorder } from '../console/timeline.js';
import { operationsRoutes } from '../server/http/ops-routes.js';
import { readinessProbe } from '../telemetry/health.js';
import { requestInstrument } from '../telemetry/http.js';
import { combineObservers } from '../runner/observer.js';
import { LOG_FORMATS, lifecycleLog, lineLogger, type LogFormat } from '../telemetry/log.js';
import { createMetrics } from '../telemetry/metrics.js';
import { taskGauge } from '../telemetry/task-gauge.js';
import { timedStore } from '../telemetry/store.js';
import { taskTracing } from '../telemetry/trace.js';
import { listenErrorMessage, probeListen } from './listen-check.js';
import { handOverStdout } from './broken-pipe.js';

interface ServeFlags extends AuthFlags, WebhookFlags, WorkerFlags {
  readonly host: string;
  readonly port: number;
  readonly db: string;
  readonly stdio: boolean;
  readonly fixtures?: 'conformance' | 'cluster' | 'hostile';
  readonly nodeId: string;
  readonly pgSchema?: string;
  readonly verbose: boolean;
  readonly disableWire: WireName[];
  readonly allowedOrigin: string[];
  /** false with --no-runner: serve only; `terminus worker` processes run the tools. */
  readonly runner: boolean;
  /** false with --no-fast-path: every task-method request through the SDK (issue 14 differential tests). */
  readonly fastPath: boolean;
  readonly fullIntegrityCheck: boolean;
  readonly maxSessions: number;
  readonly maxSessionsPerCaller?: number;
  readonly maxListenStreams: number;
  readonly maxListenStreamsPerCaller: number;
  readonly createsPerMinute: number;
  readonly pollsPerMinute: number;
  readonly maxLiveTasks: number;
  readonly keyRetentionDays: number;
  readonly maxArgumentBytes: number;
  readonly maxAttempts: number;
  readonly maxPollIntervalMs: number;
  readonly logFormat: LogFormat;
  readonly logPayloads: boolean;
  readonly leaseMs?: number;
  readonly maxTaskEvents: number;
  readonly console: boolean;
  readonly consoleOperator: string[];
  readonly consoleListAnonymous: boolean;
}

/**
 * `terminus serve`: the demo (or fixture) tools on a SQLite or PostgreSQL store, over HTTP or stdio.
 * stdout carries exactly one line (where it listens) in HTTP mode and only protocol messages in
 * stdio mode; logs go to stderr.
 */
export function registerServe(program: Command): void {
  const command = environmentCommand(program, 'serve')
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
        'hostile',
      ]),
    )
    .option('--verbose', 'debug logs on stderr', false)
    .option(
      '--disable-wire <wire>',
      'refuse new submissions on a wire (repeatable); its existing tasks keep status, result, cancel and list',
      collectWire,
      [],
    )
    .option('--auth-tokens <file>', 'require a bearer token: JSON file {"<token>": "<client id>"}')
    .option('--auth-jwks <file|url>', 'require a JWT verified with this JWKS (file or https:// URL)')
    .option('--auth-issuer <iss>', 'with --auth-jwks: the required iss claim')
    .option('--auth-audience <aud>', 'with --auth-jwks: the required aud claim')
    .addOption(
      new Option(
        '--legacy-owners <source>',
        'which auth source created the tasks stored as auth:<client id> (needed with both --auth-tokens and --auth-jwks)',
      ).choices(LEGACY_OWNERS),
    )
    .option(
      '--allowed-origin <host>',
      'a browser Origin host name that may call this server (repeatable; default: localhost names)',
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option('--no-runner', 'serve only: run no tools here (start `terminus worker` processes on the same --db)')
    .option(
      '--no-fast-path',
      'send every task-method request through the SDK (no fast path; to compare answers and costs)',
    )
    .option('--full-integrity-check', 'SQLite: run integrity_check at start instead of quick_check (slower)', false)
    .option('--max-sessions <n>', 'open 2025-11-25 HTTP sessions at once', count, DEFAULT_LIMITS.maxSessions)
    .option(
      '--max-sessions-per-caller <n>',
      'open 2025-11-25 HTTP sessions of one caller (default 100, or a tenth of --max-sessions if lower)',
      count,
    )
    .option('--max-listen-streams <n>', 'open task listen streams, all callers', count, DEFAULT_LIMITS.maxListenStreams)
    .option(
      '--max-listen-streams-per-caller <n>',
      'open task listen streams of one caller',
      count,
      DEFAULT_LIMITS.maxListenStreamsPerCaller,
    )
    .option(
      '--creates-per-minute <n>',
      'tool calls per caller per minute (0: no limit)',
      count,
      DEFAULT_LIMITS.createsPerMinute,
    )
    .option(
      '--polls-per-minute <n>',
      'task reads per caller per minute (0: no limit)',
      count,
      DEFAULT_LIMITS.pollsPerMinute,
    )
    .option('--max-live-tasks <n>', 'unfinished tasks per caller (0: no limit)', count, 10_000)
    .option('--key-retention-days <n>', 'days a looked-up, never-used submission key stays burned', count, 7)
    .option('--max-argument-bytes <n>', 'largest tool call arguments, as JSON bytes', count, 1024 * 1024)
    .option('--max-attempts <n>', 'runs of one task without an outcome before it fails', count, 50)
    .option(
      '--max-task-events <n>',
      'progress and log events one task keeps, its newest (status and input events are always kept)',
      positive,
      DEFAULT_EVENT_BOUND.maxKept,
    )
    .option(
      '--max-poll-interval-ms <ms>',
      'cap of the poll interval a working task suggests, adapted to its tool’s run times (0: always the tool’s own interval)',
      count,
      DEFAULT_MAX_POLL_INTERVAL_MS,
    )
    .addOption(new Option('--log-format <format>', 'log lines on stderr as').choices(LOG_FORMATS).default('text'))
    .option('--log-payloads', 'include task arguments, results and error messages in lifecycle logs', false)
    .option('--console', 'serve the web console at /console (loopback hosts only until serve takes credentials)', false)
    .option(
      '--console-operator <client-id>',
      'an authenticated client id (token:ID or jwt:SUB with both --auth-* sources) that sees and acts on every owner’s tasks in the console (repeatable; comma-separated in the variable)',
      (value: string, previous: string[]) => [...previous, ...value.split(',').map((id) => id.trim())].filter(Boolean),
      [],
    )
    .option(
      '--console-list-anonymous',
      'list anonymous tasks in the console to callers without credentials (loopback, no --auth-*: one person’s machine)',
      false,
    )
    .option(
      '--lease-ms <ms>',
      'lease of a claimed task: a dead node’s tasks re-run this long after it stopped',
      parseMs,
    );
  webhookOptions(command);
  addWorkerOptions(command, 'serving thread').action((flags: ServeFlags) => serve(flags));
}

/**
 * A subcommand every option of which can also be set from a `TERMINUS_*` variable (`--log-format`
 * is `TERMINUS_LOG_FORMAT`); a flag on the command line wins. Done in `addOption`, which `.option()`
 * calls too, because commander binds an option's variable when the option is added: flags other
 * branches add to `serve` get their variable without a line of their own.
 */
function environmentCommand(program: Command, name: string): Command {
  class EnvironmentCommand extends Command {
    override addOption(option: Option): this {
      if (option.envVar === undefined && option.long !== undefined) {
        option.env(`TERMINUS_${option.long.slice(2).replaceAll('-', '_').toUpperCase()}`);
      }
      return super.addOption(option);
    }
  }
  // Made apart from `program.command()`, so it takes the program's settings (a usage error exits 2) itself.
  const command = new EnvironmentCommand(name).copyInheritedSettings(program);
  // Commander turns a boolean flag on whenever its variable exists; TERMINUS_STDIO=false must not.
  command.hook('preAction', (self) => {
    for (const option of self.options) {
      const key = option.attributeName();
      if (option.required || option.optional || option.envVar === undefined) continue;
      if (self.getOptionValueSource(key) !== 'env') continue;
      self.setOptionValueWithSource(key, /^(1|true|yes|on)$/i.test(process.env[option.envVar] ?? ''), 'env');
    }
  });
  program.addCommand(command);
  return command;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

function parseMs(value: string): number {
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms <= 0) throw new InvalidArgumentError('not a positive whole number of milliseconds');
  return ms;
}

function collectWire(value: string, previous: WireName[]): WireName[] {
  try {
    return [...previous, parseWireName(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function count(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('not a non-negative integer');
  return n;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('not a positive integer');
  return n;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('not a port number');
  return port;
}

async function serve(flags: ServeFlags): Promise<void> {
  checkWorkerFlags(flags);
  const logger = lineLogger({
    format: flags.logFormat,
    debug: flags.verbose,
    now: () => Date.now(),
    write: (line) => process.stderr.write(line),
  });
  // Before the store opens: a bad tokens file or JWKS is one line and exit 2, nothing started.
  const authenticate = await serveAuth(flags, { host: flags.host, stdio: flags.stdio, logger });
  if (flags.console && !flags.stdio && !LOOPBACK_HOSTS.has(flags.host) && authenticate === undefined) {
    // Without authentication every HTTP caller is `anonymous`: on a reachable port the console
    // would put a page in front of every anonymous capability (and --console-list-anonymous a list).
    process.stderr.write(
      `terminus: --console needs a loopback --host (got ${flags.host}) or --auth-tokens / --auth-jwks\n`,
    );
    process.exit(2);
  }
  if (flags.consoleListAnonymous && authenticate !== undefined) {
    // With credentials every caller has a principal: there is no anonymous caller to list for.
    process.stderr.write(
      'terminus: --console-list-anonymous is for a console without --auth-tokens / --auth-jwks (callers are signed in)\n',
    );
    process.exit(2);
  }
  if (flags.consoleOperator.length > 0 && authenticate === undefined) {
    // An unauthenticated caller has no client id, so it is never an operator: the flag would do nothing.
    process.stderr.write(
      'terminus: --console-operator needs --auth-tokens or --auth-jwks (operators are client ids)\n',
    );
    process.exit(2);
  }
  let operators: string[];
  try {
    operators = operatorPrincipals(flags, flags.consoleOperator);
  } catch (error) {
    process.stderr.write(`terminus: ${(error as Error).message}\n`);
    process.exit(2);
  }
  // Bind first: a port in use or a bad --host must not leave a new database file behind.
  if (!flags.stdio) await probeListen(flags.host, flags.port).catch(failServe);
  const webhooks = await webhookSettings(flags);
  const metrics = createMetrics();
  const opened = await openStoreOrExit({
    db: flags.db,
    nodeId: flags.nodeId,
    pgSchema: flags.pgSchema,
    logger,
    integrityCheck: flags.fullIntegrityCheck ? 'full' : 'quick',
    onCommit: (report) => metrics.commit(report),
    eventBound: { maxKept: flags.maxTaskEvents },
    onEventsDropped: (n) => metrics.eventsDropped(n),
  });
  if (!flags.stdio) await adoptOwnersAtStart(flags, opened.store, logger).catch(failServe);
  const store = timedStore(opened.store, (operation, seconds, ok) => metrics.storeCall(operation, seconds, ok));
  const readiness = readinessProbe({ store, now: () => systemClock.now(), runner: flags.runner });
  const timeline = flags.console ? timelineRecorder() : undefined;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tools keep their own Args types
  let tools: readonly TaskToolDefinition<any>[] = demoTools({ dataDir: opened.dataDir });
  let preflights: Readonly<Record<string, Preflight>> = {};
  if (flags.fixtures === 'conformance') {
    tools = conformanceTools;
    preflights = conformancePreflights;
  }
  if (flags.fixtures === 'cluster') tools = clusterTools({ dataDir: opened.dataDir });
  if (flags.fixtures === 'hostile') tools = hostileTools;
  taskGauge({ registry: metrics.registry, store, now: () => systemClock.now(), tools: tools.map((t) => t.name) });
  const engine = createEngine({
    store,
    events: opened.events,
    nodeId: flags.nodeId,
    tools,
    clock: systemClock,
    ids: systemIds,
    random: systemRandom,
    logger,
    maxLiveTasksPerOwner: flags.maxLiveTasks,
    keyRetentionMs: Math.max(1, flags.keyRetentionDays) * 86_400_000,
    maxArgumentBytes: Math.max(1, flags.maxArgumentBytes),
    maxAttempts: Math.max(1, flags.maxAttempts),
    maxPollIntervalMs: flags.maxPollIntervalMs,
    webhooks,
    ...(flags.leaseMs === undefined ? {} : { leaseMs: flags.leaseMs }),
    ...workerEngineOptions(flags, flags.fixtures ?? 'demo', opened.dataDir),
    observer: combineObservers(
      lifecycleLog({ logger, payloads: flags.logPayloads }),
      metrics.observer,
      taskTracing(),
      readiness.observer,
      timeline?.observer,
    ),
  });
  if (flags.runner) engine.start();
  const delivery = startDelivery(store, flags, flags.nodeId, logger, metrics.registry);
  // A status change may have added outbox rows: deliver now rather than at the next poll.
  engine.events.subscribe(() => delivery?.wake());
  // Every wire is served; disabled ones only refuse new submissions (seed 002).
  const wires = createWireRegistry({
    disabled: flags.disableWire,
    limits: {
      maxSessions: flags.maxSessions,
      ...(flags.maxSessionsPerCaller === undefined ? {} : { maxSessionsPerCaller: flags.maxSessionsPerCaller }),
      maxListenStreams: flags.maxListenStreams,
      maxListenStreamsPerCaller: flags.maxListenStreamsPerCaller,
      createsPerMinute: flags.createsPerMinute,
      pollsPerMinute: flags.pollsPerMinute,
    },
  });
  const server = createTerminusServer({
    engine: wires.guard(engine),
    wires: wires.adapters,
    name: 'mcp-terminus',
    version: '0.1.0',
    preflights,
    logger,
  });

  let close: () => Promise<void>;
  let stdioClosed: Promise<void> | undefined;
  if (flags.stdio) {
    handOverStdout();
    const stdio = server.serveStdio({
      limits: { createsPerMinute: flags.createsPerMinute, pollsPerMinute: flags.pollsPerMinute },
      fastPath: flags.fastPath,
    });
    close = () => stdio.close();
    stdioClosed = stdio.closed;
    logger.info(`terminus serving stdio (db ${opened.label})`);
  } else {
    const http = await server
      .serveHttp({
        host: flags.host,
        port: flags.port,
        fastPath: flags.fastPath,
        ...(authenticate === undefined ? {} : { authenticate }),
        ...(flags.allowedOrigin.length === 0 ? {} : { allowedOrigins: flags.allowedOrigin }),
        routes: [
          ...operationsRoutes({ readiness, registry: metrics.registry }),
          ...(flags.console
            ? consoleRoutes({
                engine: server.engine,
                operators,
                listAnonymous: flags.consoleListAnonymous,
                listAnonymousSwitch: '--console-list-anonymous',
                ...(timeline === undefined ? {} : { timeline }),
                ...(store.webhooks === undefined ? {} : { outbox: store.webhooks }),
                // Browsers sign in with the token once and hold a session cookie (no bearer header).
                ...(authenticate === undefined ? {} : { signIn: { verify: verifyBearer(authenticate) } }),
              })
            : []),
        ],
        instrument: requestInstrument({ metrics }),
      })
      .catch((error: unknown) => failServe(new Error(listenErrorMessage(flags.host, flags.port, error))));
    close = () => http.close();
    metrics.countSessions(() => http.openSessions());
    process.stdout.write(`terminus listening on ${http.url} (db ${opened.label})\n`);
  }

  // Stop taking requests, then stop the runners (they release their leases), then events and store.
  const stop = exitOnSignals(logger, 'running tasks keep their state and resume on the next start', async () => {
    await close();
    await engine.stop();
    await delivery?.stop();
    await opened.close();
  });
  // The MCP stdio binding's shutdown: the client closes stdin, and the server exits.
  void stdioClosed?.then(() => stop('stdin closed'));
}

/** One line on stderr, exit 1: what a person sees instead of a stack trace. */
function failServe(error: unknown): never {
  process.stderr.write(`terminus serve: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
