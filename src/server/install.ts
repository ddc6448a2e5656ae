import {
  McpServer,
  ProtocolError,
  Server,
  type JSONRPCRequest,
  type Result,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { TaskEngine } from '../runner/engine-port.js';
import { callToolInline } from './inline-call.js';
import type { TransportKind } from './owner.js';
import type { TaskToolDefinition } from '../runner/tool.js';
import { inputSchemaOf, listTools, type ListedTool } from './tools-list.js';
import type { Era, WireAdapter, WireDeps } from './wire/adapter.js';

/** What `installTerminus` needs: the engine, the wires and the serving context of one SDK instance. */
export interface InstallDeps extends WireDeps {
  readonly wires: readonly WireAdapter[];
}

/** The era and transport of one SDK instance; the SDK factory's context (`{ era, requestInfo? }`) fits. */
export interface InstallContext {
  /** The era the SDK factory was called for; default `modern` (2026-07-28). */
  readonly era?: Era;
  /**
   * Picks the owner of unauthenticated callers (see `ownerOf`). Default: `http` when the context
   * carries `requestInfo` (createMcpHandler) or no context is given, `stdio` otherwise (serveStdio).
   */
  readonly transport?: TransportKind;
  readonly requestInfo?: unknown;
}

type StoredHandler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/**
 * Installs the task tools and every wire's task methods of `deps` on one SDK instance, for one era.
 * The one mechanism both `createTerminusServer` (on a bare `Server`) and `createTerminus().install`
 * (on an author's `McpServer` or `Server`) use:
 *
 * 1. `tools/list` and `tools/call` for the task tools (inline fallback), then each wire of the era
 *    registers its methods (`WireAdapter.install`), exactly as on a bare server;
 * 2. if the instance already had `tools/list` / `tools/call` (the author's plain tools), both are
 *    served from `fallbackRequestHandler`: the lists are joined (a task tool shadows a plain tool of
 *    the same name) and a call goes to the author's handler unless it names a task tool. The
 *    fallback is the SDK's unvalidated path, which the 2025 wire's nested `{ task }` answer needs
 *    (reference 5.7); each side's own handler still validates its own results.
 *
 * Call it after the author registered their tools: `McpServer` installs its handlers on the first
 * `registerTool`, and refuses to once another `tools/call` is set.
 */
export function installTerminus<S extends McpServer | Server>(target: S, deps: InstallDeps, era: Era): S {
  const product: McpServer | Server = target;
  const server = product instanceof McpServer ? product.server : product;
  const active = deps.wires.filter((w) => w.eras.includes(era));
  const extensions = Object.assign({}, ...active.map((w) => w.extensions ?? {})) as Record<
    string,
    Record<string, never>
  >;
  server.registerCapabilities({ tools: {}, ...(Object.keys(extensions).length > 0 ? { extensions } : {}) });

  if (product instanceof McpServer) exposeInputSchemas(product, deps.engine);
  const theirs = { list: storedHandler(server, 'tools/list'), call: storedHandler(server, 'tools/call') };
  const tools = listedTools(deps.engine.tools);
  server.setRequestHandler('tools/list', () => ({ tools }));
  server.setRequestHandler('tools/call', (request, ctx) => callToolInline(deps.engine, request.params, ctx) as never);
  for (const wire of active) wire.install(server, deps);
  if (theirs.list === undefined && theirs.call === undefined) return target;

  const ours = {
    list: storedHandler(server, 'tools/list'),
    call: storedHandler(server, 'tools/call'),
    fallback: server.fallbackRequestHandler,
  };
  server.removeRequestHandler('tools/list');
  server.removeRequestHandler('tools/call');
  // The wires' fallback (the 2025 wire's) already hands what it does not serve to the author's.
  const rest = ours.fallback;
  server.fallbackRequestHandler = async (request, ctx) => {
    if (request.method === 'tools/list') return joinLists(deps.engine, ours.list, theirs.list, request, ctx);
    if (request.method === 'tools/call') {
      const name = (request.params as { name?: unknown } | undefined)?.name;
      const mine = typeof name === 'string' && deps.engine.tools.has(name);
      if (!mine && theirs.call !== undefined) return theirs.call(request, ctx);
      if (ours.call !== undefined) return ours.call(request, ctx);
    }
    if (rest !== undefined) return rest(request, ctx);
    throw new ProtocolError(-32601, `Method not found: ${request.method}`);
  };
  return target;
}

/**
 * Lets the SDK's HTTP entry (`createMcpHandler`) check the `Mcp-Param-*` headers (SEP-2243) of a
 * task tool before dispatch, as it does for the author's own tools: HTTP 400 instead of the
 * in-band `-32020` `callTool` would send. The entry asks `McpServer.toolInputSchemaJson` (SDK 2.4,
 * marked internal; test/server/install.test.ts pins it); an SDK without it keeps the in-band check.
 */
function exposeInputSchemas(product: McpServer, engine: TaskEngine): void {
  const target = product as unknown as { toolInputSchemaJson?: (name: string) => Record<string, unknown> | undefined };
  const own = target.toolInputSchemaJson;
  if (typeof own !== 'function') return;
  target.toolInputSchemaJson = (name) => {
    const tool = engine.tools.get(name);
    return tool === undefined ? own.call(product, name) : inputSchemaOf(tool);
  };
}

const listed = new WeakMap<ReadonlyMap<string, TaskToolDefinition>, ListedTool[]>();

/** `listTools` once per tool table: it runs zod's JSON Schema conversion, and install runs per request. */
function listedTools(tools: ReadonlyMap<string, TaskToolDefinition>): ListedTool[] {
  let list = listed.get(tools);
  if (list === undefined) {
    list = listTools(tools);
    listed.set(tools, list);
  }
  return list;
}

/** The era and transport `install` serves, from the SDK factory's context. */
export function resolveInstallContext(context: InstallContext | undefined): { era: Era; transport: TransportKind } {
  const era = context?.era ?? 'modern';
  const transport =
    context?.transport ?? (context === undefined || context.requestInfo !== undefined ? 'http' : 'stdio');
  return { era, transport };
}

async function joinLists(
  engine: TaskEngine,
  ours: StoredHandler | undefined,
  theirs: StoredHandler | undefined,
  request: JSONRPCRequest,
  ctx: ServerContext,
): Promise<Result> {
  const mine = ours === undefined ? { tools: [] } : await ours(request, ctx);
  if (theirs === undefined) return mine;
  const other = await theirs(request, ctx);
  const plain = ((other.tools as { name: string }[] | undefined) ?? []).filter((t) => !engine.tools.has(t.name));
  return { ...other, tools: [...((mine.tools as unknown[] | undefined) ?? []), ...plain] };
}

/**
 * The handler an SDK instance has registered for `method`, as the SDK stores it (validation
 * included). Read through the SDK's protected accessor `_getRequestHandler` (SDK 2.4), which role
 * classes use to re-dispatch through the stored chain; a test pins it (test/server/install.test.ts).
 */
function storedHandler(server: Server, method: string): StoredHandler | undefined {
  const accessor = (server as unknown as { _getRequestHandler?: (m: string) => StoredHandler | undefined })
    ._getRequestHandler;
  if (typeof accessor !== 'function') {
    throw new TypeError('this @modelcontextprotocol/server has no _getRequestHandler; mcp-terminus needs ^2.4');
  }
  return accessor.call(server, method);
}
