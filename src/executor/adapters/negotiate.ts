/**
 * Picks the client wire for a server and connects it. `auto` (the default) takes the best wire the
 * server offers, in this order (most capable first: push hints, input rounds, key lookup, the full
 * status vocabulary):
 *
 * 1. `mcp-tasks-ext`: `server/discover` advertises the Tasks extension (2026-07-28);
 * 2. `mcp-2025-11-25`: `initialize` advertises `tasks.requests.tools.call`;
 * 3. `sep-1391`: after an `initialize` declaring the SEP-1391 flag, `tools/list` shows a tool with
 *    `invocationMode: "async"` (SEP-1391 has no capability of its own);
 * 4. `aip-151` (HTTP targets only): `GET /v1/operations` on the same origin answers a list.
 *
 * else `WireUnavailableError`. A forced wire skips the probes (the ledger stores which wire created
 * each operation, and a resumed operation is driven by that wire, whatever the server advertises
 * now). `skip` takes wires out of `auto` (the executor's `disabledWires`).
 */
import type { Clock } from '../../core/ports.js';
import type { WireName } from '../../core/task.js';
import { paramHeadersOf, type ParamHeader } from '../../core/param-headers.js';
import type { SessionBinding } from '../operation.js';
import type { ClientWire } from '../wire-port.js';
import { WireFailure } from '../wire-port.js';
import type { RpcConnection } from './connection.js';
import { DEFAULT_CLIENT_INFO, LEGACY_PROTOCOL_VERSION, TASKS_EXTENSION, type ClientInfo } from './envelope.js';
import { createHttpConnection } from './http-channel.js';
import { createRev20251125Wire } from './rev2025-11-25/index.js';
import { isRecord } from './rpc-error.js';
import { createStdioConnection, type StdioConnectionOptions } from './stdio-channel.js';
import { createTasksExtWire } from './tasks-ext/index.js';
import { createSep1391Wire, SEP_1391_CAPABILITY } from './sep-1391/index.js';
import { createAip151Wire } from './aip-151/index.js';
import { createAipHttp } from './aip-151/http.js';
import { TaskListener } from './task-listener.js';
import { LISTEN_LOGS_KEY } from './logs.js';

/** The wires this client speaks: every wire the server side has. */
export type ClientWireName = WireName;
export type WireChoice = 'auto' | ClientWireName;

/** Where a server is: an HTTP endpoint, a command to spawn (stdio), or a ready connection. */
export type ServerTarget =
  | {
      readonly url: string;
      readonly headers?: Readonly<Record<string, string>>;
      readonly fetch?: typeof fetch;
    }
  | Omit<StdioConnectionOptions, 'clock' | 'era' | 'timeoutMs' | 'clientInfo'>
  | { readonly connection: RpcConnection };

export interface ConnectOptions {
  readonly clock: Clock;
  readonly wire?: WireChoice;
  /** Per-request timeout (ms); default 30 000. */
  readonly timeoutMs?: number;
  readonly clientInfo?: ClientInfo;
  /** Wires `auto` must not pick (a forced wire is used as asked). */
  readonly skip?: readonly WireName[];
  /**
   * Open a push stream for the tasks waited on, where the connection has one (HTTP: Tasks-extension
   * `subscriptions/listen`, the 2025-11-25 session's GET stream). Default true; false: polling only.
   */
  readonly listen?: boolean;
  /**
   * Continue this legacy-era HTTP session (a resumed operation's, from the ledger) instead of
   * opening a new one: a server that binds tasks to their session knows the task only there. Used
   * with a forced `mcp-2025-11-25` or `sep-1391` wire over HTTP; ignored elsewhere (the 2026-07-28
   * wire has no sessions, stdio and AIP-151 none to keep). When the server no longer knows the
   * session (HTTP 404 to a `ping` on it), a new session is opened and each `not_found` of the wire
   * then says so (`WireFailure.note`).
   */
  readonly session?: SessionBinding | undefined;
}

/** The connection's one push stream, when it can carry one and listening is on. */
function listenerOf(
  connection: RpcConnection,
  options: ConnectOptions,
  kind: 'listen' | 'session',
): { listener?: TaskListener } {
  const open = connection.openStream?.bind(connection);
  if (options.listen === false || open === undefined) return {};
  const listener = new TaskListener({
    clock: options.clock,
    allTasks: kind === 'session',
    open: (taskIds, signal, logs) =>
      kind === 'session'
        ? open({ kind: 'session' }, signal)
        : open(
            {
              kind: 'listen',
              params: { notifications: { taskIds: [...taskIds], ...(logs ? { [LISTEN_LOGS_KEY]: true } : {}) } },
            },
            signal,
          ),
  });
  return { listener };
}

function tasksExt(connection: RpcConnection, options: ConnectOptions, close: () => Promise<void>): ClientWire {
  let listed: Promise<ReadonlyMap<string, readonly ParamHeader[]>> | undefined;
  return createTasksExtWire({
    channel: connection.request,
    close,
    onNotification: (listener) => connection.onNotification(listener),
    ...listenerOf(connection, options, 'listen'),
    // Read once per connection, and only after a -32020 refusal: most tools declare no header.
    paramHeaders: async (tool) => {
      listed ??= listParamHeaders(connection).catch((error: unknown) => {
        listed = undefined;
        throw error;
      });
      return (await listed).get(tool) ?? [];
    },
  });
}

/**
 * The server advertises no task wire this client speaks (or not the forced one).
 *
 * @example
 * ```ts
 * try {
 *   await connectServer({ url }, { clock: systemClock, wire: 'sep-1391' });
 * } catch (error) {
 *   if (error instanceof WireUnavailableError) console.error(`${url} does not speak SEP-1391`);
 *   else throw error;
 * }
 * ```
 */
export class WireUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireUnavailableError';
  }
}

/**
 * @example
 * const wire = await connectServer({ url: 'http://127.0.0.1:3000/mcp' }, { clock: systemClock });
 * const wire2 = await connectServer({ command: 'node', args: ['dist/cli/main.js', 'serve', '--stdio'] }, { clock });
 */
export async function connectServer(target: ServerTarget, options: ConnectOptions): Promise<ClientWire> {
  const choice = options.wire ?? 'auto';
  if (choice === 'aip-151') return connectAip(target, options);
  const connection = await open(target, options);
  const aipAllowed = choice === 'auto' && !(options.skip ?? []).includes('aip-151') && 'url' in target;
  let wire: ClientWire;
  try {
    wire = await negotiate(connection, options);
  } catch (error) {
    await connection.close();
    const aipNext = choice === 'auto' && !(options.skip ?? []).includes('aip-151') && 'url' in target;
    if (aipNext && noMcpWire(error) && (await offersOperations(target, options))) return connectAip(target, options);
    throw error;
  }
  // Plain calls are the last resort: an AIP-151 server beside a task-less MCP endpoint takes tasks.
  if (wire.plainOnly === true && aipAllowed && (await offersOperations(target, options))) {
    await wire.close();
    return connectAip(target, options);
  }
  return wire;
}

/** The wire reports the end of its connection (a stdio child that exited) where the connection can. */
function withCloseSignal(wire: ClientWire, connection: RpcConnection): ClientWire {
  const onClose = connection.onClose?.bind(connection);
  return onClose === undefined ? wire : { ...wire, onClose };
}

/** No MCP task wire there: none advertised, or no MCP endpoint answering at all. */
function noMcpWire(error: unknown): boolean {
  return (
    error instanceof WireUnavailableError ||
    (error instanceof WireFailure && (error.kind === 'rejected' || error.kind === 'not_found'))
  );
}

type HttpTarget = Extract<ServerTarget, { readonly url: string }>;

/** `GET /v1/operations` (ListOperations) on the MCP endpoint's origin answers a list. */
async function offersOperations(target: HttpTarget, options: ConnectOptions): Promise<boolean> {
  const http = createAipHttp({
    baseUrl: new URL(target.url).origin,
    clock: options.clock,
    timeoutMs: options.timeoutMs ?? 30_000,
    ...(target.headers === undefined ? {} : { headers: target.headers }),
    ...(target.fetch === undefined ? {} : { fetch: target.fetch }),
  });
  try {
    const answer = await http('GET', '/v1/operations?pageSize=1', undefined);
    return isRecord(answer) && (answer.operations === undefined || Array.isArray(answer.operations));
  } catch {
    return false;
  }
}

/**
 * AIP-151 on the MCP endpoint's origin (our server serves `/v1` beside `/mcp` on one port), with
 * key lookups through `terminus/tasks/lookup` on the MCP endpoint itself (same owner, see the adapter).
 */
function connectAip(target: ServerTarget, options: ConnectOptions): ClientWire {
  if (!('url' in target)) throw new WireUnavailableError('aip-151 needs an HTTP target (an http(s) URL)');
  const lookup = createHttpConnection({
    url: target.url,
    clock: options.clock,
    ...(target.headers === undefined ? {} : { headers: target.headers }),
    ...(target.fetch === undefined ? {} : { fetch: target.fetch }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.clientInfo === undefined ? {} : { clientInfo: options.clientInfo }),
  });
  return createAip151Wire({
    baseUrl: new URL(target.url).origin,
    clock: options.clock,
    lookup: lookup.request,
    close: () => lookup.close(),
    ...(target.headers === undefined ? {} : { headers: target.headers }),
    ...(target.fetch === undefined ? {} : { fetch: target.fetch }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
}

async function open(target: ServerTarget, options: ConnectOptions): Promise<RpcConnection> {
  const common = {
    clock: options.clock,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.clientInfo === undefined ? {} : { clientInfo: options.clientInfo }),
  };
  if ('connection' in target) return target.connection;
  if ('url' in target) {
    const legacy = options.wire === 'mcp-2025-11-25' || options.wire === 'sep-1391';
    const session = legacy && options.session !== undefined ? { session: options.session } : {};
    return createHttpConnection({ ...target, ...common, ...session });
  }
  return createStdioConnection({ ...target, ...common });
}

/**
 * Negotiates on an open connection and returns the adapter; the adapter's `close` closes the
 * connection, and its `onClose` reports the connection ending by itself (where it can tell).
 *
 * @example
 * ```ts
 * const connection = createHttpConnection({ url: 'http://127.0.0.1:3000/mcp', clock: systemClock });
 * const wire = await negotiate(connection, { clock: systemClock });
 * console.log(wire.wire); // e.g. 'mcp-tasks-ext' or 'mcp-2025-11-25'
 * await wire.close();
 * ```
 */
export async function negotiate(connection: RpcConnection, options: ConnectOptions): Promise<ClientWire> {
  return withCloseSignal(await pickWire(connection, options), connection);
}

async function pickWire(connection: RpcConnection, options: ConnectOptions): Promise<ClientWire> {
  const choice = options.wire ?? 'auto';
  const auto = (wire: WireName): boolean => choice === 'auto' && !(options.skip ?? []).includes(wire);
  const close = () => connection.close();
  if (choice === 'aip-151') throw new WireUnavailableError('aip-151 is HTTP, not an MCP connection: use connectServer');
  if (choice === 'mcp-tasks-ext') {
    connection.era = 'modern';
    return tasksExt(connection, options, close);
  }
  if (auto('mcp-tasks-ext')) {
    connection.era = 'modern';
    if (await advertisesExtension(connection)) return tasksExt(connection, options, close);
  }
  connection.era = 'legacy';
  // The SEP-1391 flag only changes what tools/list shows; a 2025 task call (`params.task`) stays 2025.
  const sep = choice === 'sep-1391' || auto('sep-1391');
  const kept = await keptSession(connection, choice);
  // A kept session was initialized by the process that created the operation, with task calls.
  const capabilities = kept.kept
    ? undefined
    : await initialize(connection, options.clientInfo ?? DEFAULT_CLIENT_INFO, sep);
  const taskCalls = capabilities === undefined || legacyTaskCalls(capabilities);
  const sessionOf = connection.session === undefined ? {} : { session: () => connection.session?.() };
  const note = kept.note === undefined ? {} : { sessionNote: kept.note };
  const legacy = async (): Promise<ClientWire> =>
    createRev20251125Wire({
      channel: connection.request,
      onNotification: (listener) => connection.onNotification(listener),
      close,
      taskCalls,
      ...sessionOf,
      ...note,
      ...(taskCalls ? listenerOf(connection, options, 'session') : {}),
      ...(taskCalls ? { taskSupport: await listTaskSupport(connection) } : {}),
    });
  if (choice === 'mcp-2025-11-25' || (auto('mcp-2025-11-25') && taskCalls)) return legacy();
  if (choice === 'sep-1391' || (auto('sep-1391') && (await offersAsyncTools(connection)))) {
    return createSep1391Wire({ channel: connection.request, close, ...sessionOf, ...note });
  }
  // T-08 / C12: a server with no task wire at all still answers tools: they are called plainly and
  // their CallToolResult is the receipt (an ordinary FastMCP or SDK server, say).
  if (auto('mcp-2025-11-25')) return legacy();
  throw new WireUnavailableError(
    'server advertises neither the Tasks extension, 2025-11-25 task tool calls, nor SEP-1391 async tools',
  );
}

/**
 * Whether the connection continues a session it was given (`ConnectOptions.session`): a `ping` on
 * it proves the server still knows it. HTTP 404 on the session is the spec's "session ended": the
 * caller initializes a new one, and the note says why tasks of the old one may now be unknown. Any
 * other failure (no answer) fails the connect, to be tried again.
 */
async function keptSession(connection: RpcConnection, choice: WireChoice): Promise<{ kept: boolean; note?: string }> {
  const given = connection.session?.();
  if (given === undefined || (choice !== 'mcp-2025-11-25' && choice !== 'sep-1391')) return { kept: false };
  try {
    await connection.request('ping', {});
    return { kept: true };
  } catch (error) {
    if (!(error instanceof WireFailure && error.httpStatus === 404)) throw error;
    return {
      kept: false,
      note: 'the server no longer knows the HTTP session the task was created in (HTTP 404), so it was asked in a new session, where a server that binds tasks to sessions knows none',
    };
  }
}

/** Pages of `tools/list` read at most: 20 x the server's page size covers any real server here. */
const TOOL_PAGES = 20;

/**
 * T-09: `execution.taskSupport` of every listed tool (absent stays absent: forbidden). A server that
 * has no `tools/list` leaves the map empty, so every call goes out plainly: a `required` tool then
 * answers -32601 (T-13), which proves nothing ran (NEVER_CREATED), never a call made twice.
 */
async function listTaskSupport(connection: RpcConnection): Promise<ReadonlyMap<string, string>> {
  const support = new Map<string, string>();
  let cursor: string | undefined;
  try {
    for (let page = 0; page < TOOL_PAGES; page++) {
      const answer = await connection.request('tools/list', cursor === undefined ? {} : { cursor });
      for (const tool of Array.isArray(answer.tools) ? (answer.tools as unknown[]) : []) {
        if (!isRecord(tool) || typeof tool.name !== 'string') continue;
        const value = isRecord(tool.execution) ? tool.execution.taskSupport : undefined;
        if (typeof value === 'string') support.set(tool.name, value);
      }
      if (typeof answer.nextCursor !== 'string' || answer.nextCursor === '') break;
      cursor = answer.nextCursor;
    }
  } catch (error) {
    // Only a server that answers "no such method" has no list; a lost answer fails the connect.
    if (!(error instanceof WireFailure && (error.kind === 'rejected' || error.kind === 'not_found'))) throw error;
  }
  return support;
}

/** SEP-2243: each listed tool's `x-mcp-header` arguments (a server without `tools/list`: none). */
async function listParamHeaders(connection: RpcConnection): Promise<ReadonlyMap<string, readonly ParamHeader[]>> {
  const headers = new Map<string, readonly ParamHeader[]>();
  let cursor: string | undefined;
  try {
    for (let page = 0; page < TOOL_PAGES; page++) {
      const answer = await connection.request('tools/list', cursor === undefined ? {} : { cursor });
      for (const tool of Array.isArray(answer.tools) ? (answer.tools as unknown[]) : []) {
        if (!isRecord(tool) || typeof tool.name !== 'string' || !isRecord(tool.inputSchema)) continue;
        headers.set(tool.name, paramHeadersOf(tool.inputSchema));
      }
      if (typeof answer.nextCursor !== 'string' || answer.nextCursor === '') break;
      cursor = answer.nextCursor;
    }
  } catch (error) {
    if (!(error instanceof WireFailure && (error.kind === 'rejected' || error.kind === 'not_found'))) throw error;
  }
  return headers;
}

/** SEP-1391 has no capability: a server speaking it marks its async tools `invocationMode: "async"` (L-01). */
async function offersAsyncTools(connection: RpcConnection): Promise<boolean> {
  try {
    const { tools } = await connection.request('tools/list', {});
    return Array.isArray(tools) && tools.some((tool) => isRecord(tool) && tool.invocationMode === 'async');
  } catch (error) {
    if (error instanceof WireFailure && (error.kind === 'rejected' || error.kind === 'not_found')) return false;
    throw error;
  }
}

/** `server/discover` (2026-07-28). An error answer means a server of an older revision: false. */
async function advertisesExtension(connection: RpcConnection): Promise<boolean> {
  try {
    const result = await connection.request('server/discover', {});
    const extensions = isRecord(result.capabilities) ? result.capabilities.extensions : undefined;
    return isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]);
  } catch (error) {
    if (error instanceof WireFailure && (error.kind === 'rejected' || error.kind === 'not_found')) return false;
    throw error;
  }
}

async function initialize(
  connection: RpcConnection,
  clientInfo: ClientInfo,
  sep1391: boolean,
): Promise<Record<string, unknown>> {
  const result = await connection.request('initialize', {
    protocolVersion: LEGACY_PROTOCOL_VERSION,
    // `tasks: {}`: we make task-augmented calls (a server such as our bridge offers its task tools
    // only to a client that says so) and receive none (no `tasks.requests` of our own).
    capabilities: {
      elicitation: {},
      tasks: {},
      ...(sep1391 ? { experimental: { [SEP_1391_CAPABILITY]: {} } } : {}),
    },
    clientInfo: { ...clientInfo },
  });
  connection.legacyVersion =
    typeof result.protocolVersion === 'string' ? result.protocolVersion : LEGACY_PROTOCOL_VERSION;
  await connection.notify('notifications/initialized', {});
  return isRecord(result.capabilities) ? result.capabilities : {};
}

function legacyTaskCalls(capabilities: Record<string, unknown>): boolean {
  const tasks = capabilities.tasks;
  if (!isRecord(tasks) || !isRecord(tasks.requests)) return false;
  const tools = tasks.requests.tools;
  return isRecord(tools) && isRecord(tools.call);
}
