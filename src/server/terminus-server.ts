import { McpServer, Server, type McpServerFactory, type Transport } from '@modelcontextprotocol/server';
import { serveStdio as sdkServeStdio, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import { silentLogger, type Logger } from '../core/ports.js';
import type { TaskEngine } from '../runner/engine-port.js';
import { serveHttp, type HttpServerHandle, type ServeHttpOptions } from './http/serve.js';
import { anonymousCapabilities } from './anonymous.js';
import { installTerminus } from './install.js';
import { checkedInput } from './input-checks.js';
import { resolveLimits, type ServerLimits } from './limits.js';
import { CallerRates } from './rate-limit.js';
import type { FastMethod } from './http/fast-path.js';
import type { TransportKind } from './owner.js';
import type { Preflight } from './preflight.js';
import { defaultPreflightStateSeal, preflightStateSeal } from './preflight-state.js';
import type { LegacyHttpLeg, WireAdapter, WireDeps } from './wire/adapter.js';
import { tasksExtensionWire } from './wire/tasks-ext/index.js';
import { stdioFastMethods, stdioFastPath, type StdioFastPath } from './stdio-fast.js';
import { stdioTransport } from './stdio-transport.js';
import { noticeClose } from './stdio-closed.js';

export interface TerminusServerOptions {
  /** The task engine (`createEngine`): tools, durable tasks, runners. */
  readonly engine: TaskEngine;
  /** `serverInfo.name`; default `mcp-terminus`. */
  readonly name?: string;
  /** `serverInfo.version`; default `0.1.0`. */
  readonly version?: string;
  /** Wires to serve; default the 2026-07-28 Tasks extension only. */
  readonly wires?: readonly WireAdapter[];
  /** MRTR rounds to run before a tool's task is created, by tool name. */
  readonly preflights?: Readonly<Record<string, Preflight>>;
  /**
   * The HMAC key (at least 32 bytes) that signs a preflight's state in `requestState`. Default: a
   * random key per process, so every round of a preflight must reach the same process; nodes
   * behind one address MUST share a key.
   */
  readonly preflightStateKey?: string | Uint8Array;
  readonly logger?: Logger;
  readonly instructions?: string;
  /**
   * Plain (non-task) tools, resources and prompts: called with each fresh per-request (HTTP) or
   * per-connection (stdio) `McpServer`, before the task tools are installed on it. Register with
   * `server.registerTool` / `registerResource` / `registerPrompt` as on any SDK server.
   * @example
   * setup: (server) => {
   *   server.registerTool('ping', { description: 'Answers pong' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
   * },
   */
  readonly setup?: (server: McpServer) => void;
}

export interface ServeStdioOptions {
  /** Another transport than the process's stdin/stdout (tests, sockets). */
  readonly transport?: Transport;
  /** Rate limits of the stdio client (-32029 with `data.retryAfterMs`); default `DEFAULT_LIMITS`. */
  readonly limits?: Partial<Pick<ServerLimits, 'createsPerMinute' | 'pollsPerMinute'>>;
  /**
   * Answer the task methods of both eras (the Tasks extension's on a 2026-07-28 connection, the
   * 2025-11-25 `tasks/get`/`tasks/cancel` on a legacy one) ahead of the SDK's dispatch when every
   * check it would make is known to pass (`stdio-fast.ts`). Default true; false: all to the SDK.
   */
  readonly fastPath?: boolean;
}

/** An MCP server over a task engine, servable over HTTP and stdio at once. */
export interface TerminusServer {
  readonly engine: TaskEngine;
  /**
   * The SDK factory (a fresh `Server` per HTTP request or stdio connection). `transport` picks the
   * owner of unauthenticated callers: `anonymous` over HTTP, `stdio` over stdio.
   */
  factory(transport: TransportKind): McpServerFactory;
  /** Serves `/mcp` (and `options.routes`) on node:http; resolves once listening. */
  serveHttp(options?: ServeHttpOptions): Promise<HttpServerHandle>;
  /**
   * Serves one client over stdio (stdout carries only protocol messages). `closed` resolves when
   * the client closes stdin (a process serving only this client stops its engine and exits then),
   * the transport fails, or `close()` is called.
   */
  serveStdio(options?: ServeStdioOptions): StdioServerHandle & { readonly closed: Promise<void> };
}

/**
 * Builds the MCP server of mcp-terminus on the official SDK v2: `tools/list` from the engine's
 * tools, `tools/call` deciding task vs inline per request, and every enabled wire's task methods.
 * Tasks live in the engine's store, never in the per-request SDK instances, so any request (or
 * node) can serve any task.
 * @example
 * import { createEngine, createTerminusServer } from 'mcp-terminus';
 * import { openSqliteTaskStore } from 'mcp-terminus/sqlite';
 *
 * const store = await openSqliteTaskStore({ path: './tasks.db' });
 * const engine = createEngine({ store, tools: [report] });
 * engine.start();
 * const server = createTerminusServer({ engine, name: 'reports', version: '1.0.0' });
 * const http = await server.serveHttp({ port: 3000 });
 * console.error(`listening on ${http.url}`);
 */
export function createTerminusServer(options: TerminusServerOptions): TerminusServer {
  const name = options.name ?? 'mcp-terminus';
  const version = options.version ?? '0.1.0';
  const wires = options.wires ?? [tasksExtensionWire];
  const logger = options.logger ?? silentLogger;
  const preflights = new Map(Object.entries(options.preflights ?? {}));
  const preflightState =
    options.preflightStateKey === undefined
      ? defaultPreflightStateSeal()
      : preflightStateSeal(options.preflightStateKey);
  // Every wire sees the engine through the anonymous-caller policy (strong keys, no lists).
  const engine = anonymousCapabilities(checkedInput(options.engine));

  const factory =
    (transport: TransportKind): McpServerFactory =>
    ({ era }) => {
      const info = { name, version };
      const serverOptions = options.instructions === undefined ? {} : { instructions: options.instructions };
      const deps = { engine, transport, preflights, preflightState, logger, wires };
      if (options.setup !== undefined) {
        const mcp = new McpServer(info, serverOptions);
        options.setup(mcp);
        return installTerminus(mcp, deps, era);
      }
      return installTerminus(new Server(info, serverOptions), deps, era);
    };

  const httpDeps: WireDeps = { engine, transport: 'http', preflights, preflightState, logger };
  const stdioDeps: WireDeps = { engine, transport: 'stdio', preflights, preflightState, logger };
  // With `setup`, an author's McpServer may own tools: the SDK then routes every modern `tools/call`
  // through the combined fallback (install.ts), whose answers the fast path does not mirror.
  const modernFast = (methods: ReadonlyMap<string, FastMethod>): ReadonlyMap<string, FastMethod> =>
    options.setup === undefined ? methods : new Map([...methods].filter(([method]) => method !== 'tools/call'));
  const stdioFast = (): StdioFastPath => {
    const methods = stdioFastMethods(wires, stdioDeps);
    return stdioFastPath({ ...methods, modern: modernFast(methods.modern) }, { name, version });
  };
  return {
    engine: options.engine,
    factory,
    serveHttp: (httpOptions = {}) =>
      serveHttp(
        {
          factory: factory('http'),
          prechecks: wires.flatMap((w) =>
            w.precheck === undefined
              ? []
              : [(message, context) => w.precheck?.(message, { ...context, deps: httpDeps })],
          ),
          logger,
          ...legacyLeg(wires, factory('http'), httpDeps),
          fast: {
            methods: modernFast(new Map(wires.flatMap((w) => [...(w.fastMethods?.(httpDeps) ?? [])]))),
            serverInfo: { name, version },
          },
        },
        {
          ...httpOptions,
          routes: [...wires.flatMap((w) => w.routes?.(httpDeps) ?? []), ...(httpOptions.routes ?? [])],
        },
      ),
    serveStdio: (stdioOptions = {}) => {
      const gated = new CallerRates(resolveLimits(stdioOptions.limits)).gateTransport(
        stdioOptions.transport ?? stdioTransport(),
      );
      const fast = stdioOptions.fastPath === false ? undefined : stdioFast();
      const { transport, closed } = noticeClose(fast === undefined ? gated : fast.transport(gated));
      const handle = sdkServeStdio(fast === undefined ? factory('stdio') : fast.factory(factory('stdio')), {
        transport,
        onerror: (error) => logger.warn('stdio error', { error: error.message }),
      });
      return { close: () => handle.close(), closed };
    },
  };
}

/** The first wire's own 2025-era HTTP leg, if a wire brings one (see `WireAdapter.legacyHttp`). */
function legacyLeg(
  wires: readonly WireAdapter[],
  factory: McpServerFactory,
  deps: WireDeps,
): { legacy?: LegacyHttpLeg } {
  const wire = wires.find((w) => w.legacyHttp !== undefined);
  return wire?.legacyHttp === undefined ? {} : { legacy: wire.legacyHttp(factory, deps) };
}
