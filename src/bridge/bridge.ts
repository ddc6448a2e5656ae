/**
 * `createBridge`: an MCP server for hosts that cannot wait, in front of one or more upstream servers.
 * Upstream tools are listed as ordinary tools; a call is submitted through the executor (durable
 * ledger, whatever task wire the upstream speaks) and followed for an inline budget below host
 * timeouts; past it the host gets an operation handle and the model the `terminus_*` tools.
 */
import {
  createMcpHandler,
  InMemoryServerEventBus,
  isLegacyRequest,
  type McpHttpHandler,
  type McpServerFactory,
  type Server,
} from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import type { Transport } from '@modelcontextprotocol/server';
import { TerminusError } from '../core/errors.js';
import { noticeClose } from '../server/stdio-closed.js';
import { silentLogger, type Clock, type Ids, type Logger, type Random } from '../core/ports.js';
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import type { ServerTarget } from '../executor/adapters/index.js';
import { createExecutor } from '../executor/executor.js';
import type { Connector, Executor } from '../executor/executor-types.js';
import type { Ledger } from '../executor/ledger-port.js';
import { Catalog, UPSTREAM_NAME } from './catalog.js';
import { ModelAnswers } from './model-answers.js';
import { BridgeOperations } from './operations.js';
import { serveBridgeHttp, type BridgeHttpHandle, type ListenRoute, type MetricsSource } from './http.js';
import { LegacySessions } from './legacy-sessions.js';
import { Questions } from './questions.js';
import { bridgeServer, httpOwnerOf, OPERATION_URI_PREFIX } from './server.js';
import { TaskFront, type Front } from './task-front.js';
import { answerTaskListen } from './task-listen.js';
import { TaskListenTransport } from './stdio-listen.js';
import { TaskPushes } from './task-pushes.js';
import { Upstream } from './upstream.js';

/**
 * Default inline wait: 45 s, below the 60 s request timeout of the MCP SDKs (and far below Claude
 * Desktop's ~4 min), leaving 15 s for the upstream's answer and the host's own overhead.
 */
export const DEFAULT_INLINE_WAIT_MS = 45_000;

export interface BridgeOptions {
  /** Upstream servers by name (letters, digits, `-`); the name is stored with each operation. */
  readonly upstreams: Readonly<Record<string, ServerTarget>>;
  /** Where operations live; the caller opens and closes it. The same ledger after a restart resumes them. */
  readonly ledger: Ledger;
  /** Namespace of this bridge's operations in the ledger (default `terminus-bridge`). */
  readonly name?: string;
  readonly version?: string;
  /** How long a host request waits for the result before a handle comes back (ms). MUST stay below the host's timeout. */
  readonly inlineWaitMs?: number;
  /** Per-request timeout toward upstreams (ms); default 30 000. */
  readonly upstreamTimeoutMs?: number;
  /**
   * Deadline of each upstream's `tools/list` (ms; default `DEFAULT_LIST_DEADLINE_MS`, 5 000): one
   * that does not answer in time is left out of the list (or listed from its last good listing) and
   * named as missing, and calls of its tools are refused until it answers. Also bounds how long a
   * model's request waits to reach an operation's upstream.
   */
  readonly listDeadlineMs?: number;
  /** Executor request cap across all operations (default the executor's 20/s). */
  readonly qps?: number;
  readonly clock?: Clock;
  readonly random?: Random;
  readonly ids?: Ids;
  readonly logger?: Logger;
  /**
   * Executor metrics (`executorMetrics()` from `mcp-terminus` fits): the bridge's executor runs on
   * its decorated ledger and connector, and `serveHttp` answers `GET /metrics` from its registry.
   */
  readonly metrics?: BridgeMetrics;
  /**
   * Which front hosts get (`FRONTS`): `auto` (default) native tasks to a host that declares the
   * Tasks extension or 2025-11-25 tasks, the tool facade (`terminus_wait`...) to the rest; `tasks`
   * also lists task support to 2025 hosts that declare nothing; `facade` the tool facade to every host.
   */
  readonly front?: Front;
  /**
   * Cap of the poll interval a native task suggests (ms; default 30 000): it adapts to how long the
   * tool's calls took, from the executor's own floor between status reads (250 ms) up to this.
   */
  readonly maxPollIntervalMs?: number;
  /** Cap of the `task.ttl` granted to a 2025-11-25 host (ms; default one day, `DEFAULT_MAX_TASK_TTL_MS`). */
  readonly maxTaskTtlMs?: number;
}

/** What the bridge needs of executor metrics: the two port decorators and a Prometheus registry. */
export interface BridgeMetrics {
  readonly registry: MetricsSource;
  ledger(ledger: Ledger): Ledger;
  connect(connect: Connector): Connector;
}

export interface Bridge {
  /** Operations found unsettled in the ledger when the bridge started, taken up in the background. */
  readonly resumed: number;
  /** The SDK factory (one `Server` per stdio connection or HTTP request). */
  readonly factory: McpServerFactory;
  /** Serves one host over stdin/stdout (or `transport`); `closed` resolves when the host closes stdin. */
  serveStdio(options?: { readonly transport?: Transport }): StdioServerHandle & { readonly closed: Promise<void> };
  /** Streamable HTTP on `host` (default 127.0.0.1) and `port` (0 picks one); `/mcp`. */
  serveHttp(options: { readonly port: number; readonly host?: string }): Promise<BridgeHttpHandle>;
  /**
   * `GET /metrics` alone on `host` (default 127.0.0.1) and `port`, for a bridge on stdio (its
   * stdout is the MCP channel); the handle's `url` ends in `/metrics`. Needs the `metrics` option.
   */
  serveMetrics(options: { readonly port: number; readonly host?: string }): Promise<BridgeHttpHandle>;
  /** Stops waiting and closes the upstreams; operations stay in the ledger (C9). The ledger stays open. */
  close(): Promise<void>;
}

/**
 * @example
 * ```ts
 * const ledger = openSqliteLedger({ path: './.terminus/bridge.db' });
 * const bridge = await createBridge({
 *   ledger,
 *   upstreams: { reports: { url: 'http://127.0.0.1:3000/mcp' } },
 * });
 * bridge.serveStdio(); // a host launches this process and talks MCP on stdin/stdout
 * ```
 */
export async function createBridge(options: BridgeOptions): Promise<Bridge> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const inlineWaitMs = options.inlineWaitMs ?? DEFAULT_INLINE_WAIT_MS;
  for (const name of Object.keys(options.upstreams)) {
    if (!UPSTREAM_NAME.test(name)) {
      throw new TerminusError(
        'invalid_argument',
        `upstream name ${JSON.stringify(name)}: use 1-32 letters, digits or '-'`,
      );
    }
  }
  if (Object.keys(options.upstreams).length === 0) {
    throw new TerminusError('invalid_argument', 'a bridge needs at least one upstream');
  }
  const upstreams = new Map(
    Object.entries(options.upstreams).map(([name, target]) => [
      name,
      new Upstream(name, target, {
        clock,
        ...(options.upstreamTimeoutMs === undefined ? {} : { timeoutMs: options.upstreamTimeoutMs }),
      }),
    ]),
  );
  const catalog = new Catalog([...upstreams.values()], {
    clock,
    logger,
    ...(options.listDeadlineMs === undefined ? {} : { listDeadlineMs: options.listDeadlineMs }),
  });
  const questions = new Questions();
  let operations: BridgeOperations | null = null;
  const metrics = options.metrics;
  const connect: Connector = async (server, wire, session) => {
    const upstream = upstreams.get(server);
    if (upstream === undefined) {
      // An operation of an upstream this bridge was not started with: it waits for a bridge that has it.
      throw new TerminusError(
        'unavailable',
        `no upstream named ${server}: start the bridge with --upstream ${server}=...`,
      );
    }
    const connected = await upstream.wire(wire, session);
    return operations === null ? connected : operations.observe(connected);
  };
  const executor: Executor = await createExecutor({
    ledger: metrics === undefined ? options.ledger : metrics.ledger(options.ledger),
    clock,
    random: options.random ?? systemRandom,
    ids: options.ids ?? systemIds,
    logger,
    approvalGate: questions.gate,
    // Each operation keeps a fingerprint of its upstream's credential: a bridge started later with
    // another one is refused before it asks (the upstream would answer another principal "not found").
    credentialOf: (server) => upstreams.get(server)?.credential() ?? null,
    ...(options.qps === undefined ? {} : { qps: options.qps }),
    connect: metrics === undefined ? connect : metrics.connect(connect),
  });
  operations = new BridgeOperations({
    executor,
    ledger: options.ledger,
    catalog,
    questions,
    clock,
    ids: options.ids ?? systemIds,
    logger,
    namespace: options.name ?? 'terminus-bridge',
    inlineWaitMs,
    maxWaitMs: inlineWaitMs,
  });

  const tasks = new TaskFront(operations, {
    ...(options.maxPollIntervalMs === undefined ? {} : { maxPollIntervalMs: options.maxPollIntervalMs }),
    ...(options.maxTaskTtlMs === undefined ? {} : { maxTaskTtlMs: options.maxTaskTtlMs }),
  });
  const pushes = new TaskPushes(tasks, operations, questions, logger);
  const front = options.front ?? 'auto';
  const live = new Set<Server>();
  /** Requests that open a 2025-11-25 HTTP session: their server lives on, so it can push. */
  const sessionful = new WeakSet<Request>();
  const bus = new InMemoryServerEventBus((error) => logger.warn('event bus', { error: error.message }));
  operations.onEnded((op, receipt) => {
    const uri = `${OPERATION_URI_PREFIX}${op.id}`;
    const data = `operation ${op.id} (${op.tool.name}) ended: ${receipt?.status ?? op.state}`;
    logger.info('operation ended', { operationId: op.id, tool: op.tool.name, outcome: receipt?.status ?? op.state });
    bus.publish({ kind: 'resource_updated', uri });
    for (const server of live) {
      server.sendResourceUpdated({ uri }).catch(() => undefined);
      server.sendLoggingMessage({ level: 'info', logger: 'terminus-bridge', data }).catch(() => undefined);
    }
  });

  catalog.onChanged((upstream) => {
    logger.info('tool list changed', { upstream });
    bus.publish({ kind: 'tools_list_changed' });
    for (const server of live) server.sendToolListChanged().catch(() => undefined);
  });

  // Take up whatever a previous process of this bridge left in flight (C11).
  const resumed = await operations.resume();

  const deps = {
    operations,
    answers: new ModelAnswers(operations),
    catalog,
    logger,
    name: options.name ?? 'terminus-bridge',
    version: options.version ?? '0.1.0',
    inlineWaitSeconds: Math.round(inlineWaitMs / 1000),
    live,
    front,
    tasks,
    pushes,
    sessionful,
  };
  const factory: McpServerFactory = (context) => bridgeServer(deps, context);
  const closers: (() => Promise<void>)[] = [];

  return {
    resumed,
    factory,
    serveStdio(stdio = {}) {
      const wire = stdio.transport ?? new StdioServerTransport();
      // The Tasks extension's task notifications: listen requests for task ids, before the SDK.
      const { transport, closed } = noticeClose(
        front === 'facade' ? wire : new TaskListenTransport(wire, { front: tasks, pushes }, logger),
      );
      const handle = serveStdio(factory, {
        transport,
        onerror: (error) => logger.warn('stdio error', { error: error.message }),
      });
      closers.push(() => handle.close());
      return { close: () => handle.close(), closed };
    },
    async serveHttp(http) {
      const modern = createMcpHandler(factory, {
        bus,
        legacy: 'reject',
        onerror: (e) => logger.debug('http', { error: e.message }),
      });
      // 2025-11-25 hosts: a session each (their capabilities kept, their task pushes on its stream).
      const sessions = new LegacySessions({
        factory,
        logger,
        ownerOf: httpOwnerOf,
        opening: (request) => sessionful.add(request),
      });
      const handler: McpHttpHandler = {
        ...modern,
        fetch: async (request, more) =>
          (await isLegacyRequest(request)) ? sessions.handle(request) : modern.fetch(request, more),
        close: async () => {
          await sessions.close();
          await modern.close();
        },
      };
      // The Tasks extension's task notifications: served by the bridge, before the SDK.
      const listen: ListenRoute | undefined =
        front === 'facade'
          ? undefined
          : (message, headers, signal) =>
              answerTaskListen(message, httpOwnerOf(headers), signal, { front: tasks, pushes });
      const served = await serveBridgeHttp(handler, {
        ...http,
        ...(metrics ? { metrics: metrics.registry } : {}),
        ...(listen === undefined ? {} : { listen }),
      });
      closers.push(() => served.close());
      return served;
    },
    async serveMetrics(listen) {
      if (metrics === undefined) throw new TerminusError('invalid_argument', 'serveMetrics needs the metrics option');
      const served = await serveBridgeHttp(null, { ...listen, metrics: metrics.registry });
      closers.push(() => served.close());
      return served;
    },
    async close() {
      await Promise.allSettled(closers.splice(0).map((close) => close()));
      await executor.close();
      await Promise.allSettled([...upstreams.values()].map((u) => u.close()));
    },
  };
}
