/**
 * The simulated server process: the real `TaskStore` (SQLite `:memory:` or memory), the real engine
 * (runner, leases, fencing, TTL sweeper) on virtual time, and the real Tasks-extension wire handlers
 * (`installTaskMethods`: decode, engine command, encode, JSON-RPC errors).
 *
 * Dispatch is in-process: `installTaskMethods` registers its handlers on a capturing stand-in for the
 * SDK `Server`, and requests are handed to those handlers with a context carrying what the SDK would
 * have put there (the per-request Tasks capability, `inputResponses` lifted out of the params, the
 * authenticated principal). What is not exercised: the SDK's own JSON-RPC framing and schema pass,
 * which run on real timers and are covered by the server's HTTP tests instead.
 *
 * Crash: the engine's clock scope and store view die together (no lease is released, the handler
 * never returns); `start()` brings up a new engine, with a new node id, on the same store. Stall:
 * the node's store calls are held while a new node takes over; `thawStalled()` lets the held writes
 * land late, with their old epoch (S3).
 */
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, type Server } from '@modelcontextprotocol/server';
import { silentLogger } from '../../core/ports.js';
import { createEngine } from '../../runner/engine.js';
import type { TaskEngine } from '../../runner/engine-port.js';
import type { WireDeps } from '../../server/wire/adapter.js';
import { TASKS_EXTENSION } from '../../server/wire/tasks-ext/constants.js';
import { installTaskMethods } from '../../server/wire/tasks-ext/methods.js';
import { aipRoutes } from '../../server/wire/aip-151/routes.js';
import { matchRoute, type HttpRoute } from '../../server/http/routes.js';
import { createRev20251125Wire } from '../../server/wire/rev2025-11-25/index.js';
import { SEP1391_CAPABILITY, sep1391ToolExtension, sep1391Wire } from '../../server/wire/sep-1391/index.js';
import { createMemoryTaskStore } from '../../store/memory/index.js';
import type { TaskStore } from '../../store/port.js';
import type { WebhookOutbox } from '../../store/outbox-port.js';
import type { WebhookSettings } from '../../runner/webhooks.js';
import type { NodeDelivery } from '../delivery/loop.js';
import { openSqliteTaskStore } from '../../store/sqlite/index.js';
import type { ClockScope, VirtualClock } from '../clock.js';
import { simIds } from '../ids.js';
import type { SimRandom } from '../random.js';
import type { Trace } from '../trace.js';
import type { ServerFacts } from './facts.js';
import { nodeView, recordingStore, type Counted, type NodeView } from './recording-store.js';
import { simTools, type ToolHooks } from './tools.js';

type Handler = (params: Record<string, unknown>, ctx: unknown) => Promise<Record<string, unknown>>;

/** Engine timing of the simulated nodes: a dead node's tasks are re-claimed 3-4 s after its last heartbeat. */
export const SIM_ENGINE = { leaseMs: 3_000, heartbeatMs: 1_000, claimIntervalMs: 1_000, sweepIntervalMs: 10_000 };

export type StoreBackend = 'sqlite' | 'memory';

export interface SimServerOptions {
  readonly clock: VirtualClock;
  readonly random: SimRandom;
  readonly trace: Trace;
  readonly facts: ServerFacts;
  readonly backend: StoreBackend;
  readonly hooks: ToolHooks;
  /** The client declared SEP-1391 async support in its `initialize` (L-06): the SEP-1391 series. */
  readonly asyncClient?: boolean;
  /** Test-only: wraps the real store under the recorder (broken server variants). */
  readonly storeHook?: (store: TaskStore, facts: ServerFacts) => TaskStore;
  /** Every task event the engine of the serving node publishes (the listen streams' source). */
  readonly onTaskEvent?: (taskId: string) => void;
  /** The operator's webhook endpoints (`--webhook`): each task is stored with them (issue 32). */
  readonly webhooks?: WebhookSettings;
  /** Starts a node's webhook delivery loop on its scope, over the store's real outbox (`delivery/loop.ts`). */
  readonly delivery?: (node: string, scope: ClockScope, outbox: WebhookOutbox, counter: Counted) => NodeDelivery;
}

interface Node {
  readonly name: string;
  readonly scope: ClockScope;
  readonly view: NodeView;
  readonly engine: TaskEngine;
  readonly handlers: Map<string, Handler>;
  /** The legacy-era (2025-11-25 + SEP-1391) handlers, and the SDK fallback that serves their `tools/call`. */
  readonly legacy: Map<string, Handler>;
  readonly routes: readonly HttpRoute[];
  readonly delivery: NodeDelivery | null;
}

/** What a legacy-era request's context carries from its connection (the input side channel, T-39). */
export interface LegacyLink {
  /** Aborted when the client gives up on the request. */
  readonly signal: AbortSignal;
  /** A server->client request on this request's stream (`elicitation/create`, reference 1.11). */
  readonly send: (request: { method: string; params: Record<string, unknown> }) => Promise<unknown>;
}

/** The server is down (crashed, not restarted yet): connection refused. */
export class ServerDown extends Error {
  constructor() {
    super('server down');
    this.name = 'ServerDown';
  }
}

export class SimServer {
  readonly counter: Counted = { inFlight: 0, calls: 0 };
  readonly #options: SimServerOptions;
  readonly #real: TaskStore;
  readonly #store: TaskStore;
  #node: Node | null = null;
  readonly #stalled: Node[] = [];
  #nodes = 0;

  private constructor(options: SimServerOptions, real: TaskStore) {
    this.#options = options;
    this.#real = real;
    const hooked = options.storeHook === undefined ? real : options.storeHook(real, options.facts);
    this.#store = recordingStore(hooked, options.facts, () => options.clock.now(), this.counter);
  }

  static async open(options: SimServerOptions): Promise<SimServer> {
    const real =
      options.backend === 'sqlite' ? await openSqliteTaskStore({ path: ':memory:' }) : createMemoryTaskStore();
    const server = new SimServer(options, real);
    server.start();
    return server;
  }

  /** The store as the checkers read it at the end (through the recorder, no node view). */
  get store(): TaskStore {
    return this.#store;
  }

  get up(): boolean {
    return this.#node !== null;
  }

  start(): void {
    if (this.#node !== null) return;
    const name = `node${++this.#nodes}`;
    const { clock, random, hooks } = this.#options;
    const scope = clock.root.child(name);
    const view = nodeView(this.#store);
    const engine = createEngine({
      store: view,
      tools: simTools(scope, hooks),
      clock: scope,
      ids: simIds(random, `${name}.`),
      random,
      logger: silentLogger,
      nodeId: name,
      ...SIM_ENGINE,
      ...(this.#options.webhooks === undefined ? {} : { webhooks: this.#options.webhooks }),
    });
    const handlers = new Map<string, Handler>();
    const capture = {
      setRequestHandler(method: string, a: unknown, b?: unknown) {
        if (typeof b === 'function') handlers.set(method, b as Handler);
        else {
          const fn = a as (request: unknown, ctx: unknown) => Promise<Record<string, unknown>>;
          handlers.set(method, (params, ctx) => fn({ method, params }, ctx));
        }
      },
    };
    const deps: WireDeps = { engine, transport: 'http', preflights: new Map(), logger: silentLogger };
    installTaskMethods(capture as unknown as Server, deps);
    const onTaskEvent = this.#options.onTaskEvent;
    if (onTaskEvent !== undefined) engine.events.subscribe((event) => onTaskEvent(event.taskId));
    const legacy = this.#installLegacy(deps);
    const outbox = this.#real.webhooks;
    const delivery =
      this.#options.delivery === undefined || outbox === undefined
        ? null
        : this.#options.delivery(name, scope, outbox, this.counter);
    // As `terminus serve` does: a commit that may have added outbox rows wakes the loop.
    if (delivery !== null) engine.events.subscribe(() => delivery.wake());
    engine.start();
    this.#node = { name, scope, view, engine, handlers, legacy, routes: aipRoutes(deps), delivery };
    this.#options.trace.add('server', `start ${name}`);
  }

  /**
   * The legacy era as a sessionful connection serves it: the 2025-11-25 wire with the SEP-1391
   * extension and methods, as the registry installs them, on a capturing stand-in for the SDK `Server`
   * that knows what the client's `initialize` declared.
   */
  #installLegacy(deps: WireDeps): Map<string, Handler> {
    const legacy = new Map<string, Handler>();
    const asyncClient = this.#options.asyncClient === true;
    const capture = {
      fallbackRequestHandler: undefined as
        ((request: unknown, ctx: unknown) => Promise<Record<string, unknown>>) | undefined,
      registerCapabilities() {},
      removeRequestHandler(method: string) {
        legacy.delete(method);
      },
      setRequestHandler(method: string, a: unknown, b?: unknown) {
        if (typeof b === 'function') legacy.set(method, b as Handler);
        else {
          const fn = a as (request: unknown, ctx: unknown) => Promise<Record<string, unknown>>;
          legacy.set(method, (params, ctx) => fn({ method, params }, ctx));
        }
      },
      getClientCapabilities: () =>
        asyncClient ? { elicitation: {}, experimental: { [SEP1391_CAPABILITY]: {} } } : { elicitation: {} },
      getNegotiatedProtocolVersion: () => '2025-11-25',
    };
    const server = capture as unknown as Server;
    createRev20251125Wire({ extensions: [sep1391ToolExtension] }).install(server, deps);
    sep1391Wire.install(server, deps);
    legacy.set('tools/call', (params, ctx) => {
      const fallback = capture.fallbackRequestHandler;
      if (fallback === undefined) throw new ProtocolError(-32601, 'Method not found: tools/call');
      return fallback({ jsonrpc: '2.0', id: 0, method: 'tools/call', params }, ctx);
    });
    return legacy;
  }

  /** One legacy-era JSON-RPC request (2025-11-25, SEP-1391); rejects `ProtocolError` or `ServerDown`. */
  async dispatchLegacy(
    method: string,
    params: Record<string, unknown>,
    principal: string,
    link: LegacyLink,
  ): Promise<Record<string, unknown>> {
    const node = this.#node;
    if (node === null) throw new ServerDown();
    const handler = node.legacy.get(method);
    if (handler === undefined) throw new ProtocolError(-32601, `Method not found: ${method}`);
    const ctx = {
      mcpReq: { id: 0, signal: link.signal, send: link.send, notify: async () => {} },
      http: { authInfo: { clientId: principal, token: 'sim', scopes: [] } },
    };
    return handler(params, ctx);
  }

  /** `execution.taskSupport` by tool, from the legacy `tools/list` (what negotiation reads, T-09). */
  async taskSupport(): Promise<Map<string, string>> {
    const idle = { signal: new AbortController().signal, send: () => Promise.reject(new Error('no stream')) };
    const { tools } = await this.dispatchLegacy('tools/list', {}, 'negotiation', idle);
    const support = new Map<string, string>();
    for (const tool of Array.isArray(tools)
      ? (tools as { name?: unknown; execution?: { taskSupport?: unknown } }[])
      : []) {
      const value = tool.execution?.taskSupport;
      if (typeof tool.name === 'string' && typeof value === 'string') support.set(tool.name, value);
    }
    return support;
  }

  /** One AIP-151 HTTP request to the real routes; rejects `ServerDown`. */
  async fetch(verb: string, path: string, body: unknown, principal: string): Promise<Response> {
    const node = this.#node;
    if (node === null) throw new ServerDown();
    const url = new URL(path, 'http://sim.invalid');
    const match = matchRoute(node.routes, verb, url.pathname);
    if (match === undefined) return new Response('{}', { status: 404 });
    const bytes = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const request = new Request(url, { method: verb, ...(bytes === undefined ? {} : { body: bytes }) });
    return match.route.handle(request, {
      authInfo: { clientId: principal, token: 'sim', scopes: [] },
      params: match.params,
      body: bytes,
    });
  }

  /** The process dies at this instant: no lease released, no outcome written. */
  crash(): void {
    const node = this.#node;
    if (node === null) return;
    node.scope.kill();
    node.view.kill();
    node.delivery?.kill();
    this.#node = null;
    this.#options.trace.add('server', `crash ${node.name}`);
  }

  /** The node stalls (GC pause, partition from the store): a new node serves; held writes land later. */
  stall(): void {
    const node = this.#node;
    if (node === null) return;
    node.view.freeze();
    node.delivery?.freeze();
    this.#stalled.push(node);
    this.#node = null;
    this.#options.trace.add('server', `stall ${node.name}`);
    this.start();
  }

  /** Stalled nodes wake up: their held writes (old epochs) reach the store, then the process exits. */
  thawStalled(): void {
    for (const node of this.#stalled.splice(0)) {
      this.#options.trace.add('server', `thaw ${node.name} (${node.view.held} held writes)`);
      node.view.thaw();
      node.delivery?.thaw();
      // It carries on only until its next timer: a zombie that learned it lost its leases exits.
      node.scope.kill();
      node.delivery?.kill();
    }
  }

  /** One JSON-RPC request as the wire handlers see it; rejects `ProtocolError` or `ServerDown`. */
  async dispatch(method: string, params: Record<string, unknown>, principal: string): Promise<Record<string, unknown>> {
    const node = this.#node;
    if (node === null) throw new ServerDown();
    const handler = node.handlers.get(method);
    if (handler === undefined) throw new ProtocolError(-32601, `Method not found: ${method}`);
    const { inputResponses, ...rest } = params;
    const ctx = {
      mcpReq: {
        envelope: { [CLIENT_CAPABILITIES_META_KEY]: { extensions: { [TASKS_EXTENSION]: {} } } },
        inputResponses: inputResponses as Record<string, unknown> | undefined,
        // A request's own signal, as the SDK gives one: inline (`forbidden`) tools run bound to it and
        // failed every call without it (C12's synchronous answers were never made).
        signal: new AbortController().signal,
      },
      http: { authInfo: { clientId: principal, token: 'sim', scopes: [] } },
    };
    return handler(method === 'tasks/update' ? rest : params, ctx);
  }

  /** The real store's webhook outbox (the checkers read it; the nodes deliver it). */
  get outbox(): WebhookOutbox | undefined {
    return this.#real.webhooks;
  }

  async close(): Promise<void> {
    this.#node?.scope.kill();
    this.#node?.view.kill();
    this.#node?.delivery?.kill();
    for (const node of this.#stalled) node.scope.kill();
    await this.#real.close();
  }
}
