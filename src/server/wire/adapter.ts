import type { AuthInfo, McpServerFactory, Server } from '@modelcontextprotocol/server';
import type { Logger } from '../../core/ports.js';
import type { WireName } from '../../core/task.js';
import type { TaskEngine } from '../../runner/engine-port.js';
import type { FastMethod, LegacyFastLeg } from '../http/fast-path.js';
import type { HttpRoute } from '../http/routes.js';
import type { TransportKind } from '../owner.js';
import type { Preflight } from '../preflight.js';
import type { PreflightStateSeal } from '../preflight-state.js';

/** The protocol era of one served request, as the SDK's factory context names it. */
export type Era = 'legacy' | 'modern';

/** What a wire adapter gets to serve requests: the engine and the serving context. */
export interface WireDeps {
  readonly engine: TaskEngine;
  /** Picks the default owner of unauthenticated callers (see `ownerOf`). */
  readonly transport: TransportKind;
  readonly preflights: ReadonlyMap<string, Preflight>;
  /** Seals preflight state into `requestState`; default a per-process key (`defaultPreflightStateSeal`). */
  readonly preflightState?: PreflightStateSeal;
  readonly logger: Logger;
}

/** What a precheck may use: the engine, the caller's principal, the request's lifetime. */
export interface PrecheckContext {
  readonly deps: WireDeps;
  readonly authInfo: AuthInfo | undefined;
  /** Aborted when the client goes away or the server closes. */
  readonly signal: AbortSignal;
  /** A request header by name (any case); absent where the caller has no headers to give. */
  readonly header?: (name: string) => string | undefined;
}

/** A JSON-RPC message as it arrives over HTTP, before the SDK sees it. */
export interface RawRpcMessage {
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: unknown;
}

/**
 * One wire protocol, server side. Each wire is a sibling folder under `src/server/wire/` holding a
 * codec (`decode.ts`: request -> engine command input; `encode.ts`: `TaskRecord` -> wire shape) and
 * this adapter object; no wire detail reaches the engine.
 *
 * - `install` runs on every fresh per-request (HTTP) or per-connection (stdio) SDK `Server` whose era
 *   is in `eras`, and registers the wire's methods. The wire that owns an era's task creation
 *   replaces `tools/call` there (the server installs an inline-only `tools/call` first).
 * - `extensions` are merged into the advertised `capabilities.extensions`.
 * - `precheck` sees each raw HTTP JSON-RPC request before the SDK and may answer it (used where the
 *   SDK routes a method itself, e.g. `subscriptions/listen`, X-40).
 * - `routes` are extra HTTP routes beside `/mcp` (AIP-151 `/v1/operations` is one).
 * - `fastMethods` are methods the HTTP fast path may answer without the SDK (`http/fast-path.ts`),
 *   by name, each the very handler `install` registers; the fast path sends to the SDK whatever it
 *   cannot vouch for.
 * - `legacyFastMethods` are the same for the legacy era, where the era is a property of the
 *   connection (a 2025-11-25 HTTP session, a stdio connection pinned to the legacy era).
 * - `legacyHttp` serves 2025-era HTTP traffic instead of the SDK's stateless leg (the server routes
 *   it with the SDK's `isLegacyRequest`); the 2025-11-25 wire uses it for a sessionful leg (side
 *   channel, status notifications). At most one wire provides it.
 */
export interface WireAdapter {
  readonly name: WireName;
  readonly eras: readonly Era[];
  readonly extensions?: Readonly<Record<string, Record<string, never>>>;
  install(server: Server, deps: WireDeps): void;
  precheck?(message: RawRpcMessage, context: PrecheckContext): Response | undefined | Promise<Response | undefined>;
  routes?(deps: WireDeps): readonly HttpRoute[];
  fastMethods?(deps: WireDeps): ReadonlyMap<string, FastMethod>;
  legacyFastMethods?(deps: WireDeps): ReadonlyMap<string, FastMethod>;
  legacyHttp?(factory: McpServerFactory, deps: WireDeps): LegacyHttpLeg;
}

/** A 2025-era HTTP handler that outlives one request (sessions); closed with the HTTP server. */
export interface LegacyHttpLeg {
  handle(request: Request, options: { authInfo?: AuthInfo; parsedBody?: unknown }): Promise<Response>;
  close(): Promise<void>;
  /** Sessions open now (metrics). */
  readonly size?: number;
  /** What the HTTP fast path may answer on this leg's sessions (`http/fast-path.ts`, `fastSessionAnswer`). */
  readonly fast?: LegacyFastLeg;
}
