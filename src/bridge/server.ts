/**
 * The bridge as an MCP server on the SDK v2 (`Server`, one instance per stdio connection or per
 * HTTP request): `tools/list` (upstream tools + the model's `terminus_*` tools), `tools/call`, and
 * every operation as a resource `terminus://operations/{id}`.
 */
import { ProtocolError, Server, type McpRequestContext, type ServerContext } from '@modelcontextprotocol/server';
import { digestOf, MAX_DIGEST_DEPTH, tooDeepForDigest } from '../core/digest.js';
import type { Logger } from '../core/ports.js';
import type { Catalog, MissingUpstream } from './catalog.js';
import type { ModelAnswers } from './model-answers.js';
import { durableNote, MODEL_TOOL_NAMES, modelTools } from './model-tools.js';
import type { BridgeOperations, Caller } from './operations.js';
import { toolError, unknownOperation } from './render.js';
import { passThrough } from './pass-through.js';
import { trimInitializeAnswer } from './sdk-initialize.js';
import { declaresTasks } from '../server/wire/tasks-ext/gate.js';
import { TASKS_EXTENSION } from '../server/wire/tasks-ext/constants.js';
import type { Front, TaskFront } from './task-front.js';
import type { TaskPushes } from './task-pushes.js';
import {
  canRunAsTask,
  extToolCall,
  installExtTaskMethods,
  installLegacyTaskMethods,
  legacyStatusNotification,
  legacyTaskCall,
  type FrontDeps,
} from './task-wires.js';

export const OPERATION_URI_PREFIX = 'terminus://operations/';

/** `_meta` key of a `tools/list` answer that lacks upstreams: `MissingUpstream[]`. */
export const MISSING_UPSTREAMS_META = 'mcp-terminus.dev/missingUpstreams';

/** What the model reads about upstreams missing from the list (in `terminus_operations`' description). */
function missingNote(missing: readonly MissingUpstream[]): string | undefined {
  if (missing.length === 0) return undefined;
  const each = missing.map(
    (m) =>
      `${m.upstream} (${m.reason}; ${m.cached ? 'its tools are listed as it last listed them' : 'its tools are missing'})`,
  );
  return `Now missing from this list: upstream ${each.join(', ')}. Its tools cannot be called until it answers; list the tools again later.`;
}

export interface ServerDeps {
  readonly operations: BridgeOperations;
  readonly answers: ModelAnswers;
  readonly catalog: Catalog;
  readonly logger: Logger;
  readonly name: string;
  readonly version: string;
  readonly inlineWaitSeconds: number;
  /** Instances that can take pushed notifications (2025-era stdio connections). */
  readonly live: Set<Server>;
  /** Which front hosts get (`auto`: native tasks to a host that declares them). */
  readonly front: Front;
  readonly tasks: TaskFront;
  /** Status pushes of the task front. */
  readonly pushes: TaskPushes;
  /** HTTP requests that opened a 2025-11-25 session (`legacy-sessions.ts`): a connection of its own. */
  readonly sessionful: WeakSet<Request>;
}

/** Whether a 2025-era host declared the `tasks` capability in `initialize`. */
export function declaresLegacyTasks(server: Server): boolean {
  return server.getClientCapabilities()?.tasks !== undefined;
}

/** Owner of the operations a request may see: `stdio`, or the HTTP caller by its Authorization header. */
export function ownerOf(context: McpRequestContext): string {
  const request = context.requestInfo;
  return request === undefined ? 'stdio' : httpOwnerOf(request.headers);
}

/** Owner of an HTTP request's operations, by its Authorization header. */
export function httpOwnerOf(headers: Headers): string {
  const auth = headers.get('authorization');
  return auth === null ? 'http:anonymous' : `http:${digestOf(auth).slice(0, 32)}`;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Strips what a host that speaks no task wire would not understand, and says a handle may come back. */
function hostFacing(listed: Readonly<Record<string, unknown>>, note: string): Record<string, unknown> {
  // outputSchema goes too: an operation handle does not match the tool's schema, and SDK clients
  // reject structuredContent that does not validate.
  const { execution: _e, invocationMode: _i, outputSchema: _o, ...rest } = listed;
  const description = typeof rest.description === 'string' ? rest.description : '';
  return { ...rest, description: `${description}${note}` };
}

const LEGACY_TASKS_CAPABILITY = { cancel: {}, list: {}, requests: { tools: { call: {} } } };

/**
 * A 2025 host that declares no `tasks` capability keeps the facade unchanged: the `initialize`
 * answer advertises the server's `tasks` capability only to a host that declared its own (or to
 * every host with `--front tasks`). The SDK part lives in `sdk-initialize.ts`.
 */
function offerTasksToDeclaringHosts(server: Server, front: Front, logger: Logger): void {
  trimInitializeAnswer(
    server,
    (params) => (front === 'tasks' || params.capabilities.tasks !== undefined ? [] : ['tasks']),
    logger,
  );
}

export function bridgeServer(deps: ServerDeps, context: McpRequestContext): Server {
  const { operations, answers, catalog } = deps;
  const owner = ownerOf(context);
  const native = deps.front !== 'facade';
  const server = new Server(
    { name: deps.name, version: deps.version },
    {
      // listChanged: an upstream missing from a list (a cold start past the deadline) is announced when it answers.
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true },
        logging: {},
        ...(native && context.era === 'modern' ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
        ...(native && context.era === 'legacy' ? { tasks: LEGACY_TASKS_CAPABILITY } : {}),
      },
      instructions:
        'Long tool calls may return an operation id instead of a result. Then call terminus_wait with that id; ' +
        'never call the tool again to wait and never invent ids (terminus_operations lists them).',
    },
  );
  if (native && context.era === 'legacy') offerTasksToDeclaringHosts(server, deps.front, deps.logger);
  // This host session's task watches (2025-11-25 over stdio): its tasks' status pushes end with it.
  const watching = new Map<string, () => void>();
  if (context.era === 'legacy') {
    deps.live.add(server);
    server.onclose = () => {
      deps.live.delete(server);
      for (const unwatch of watching.values()) unwatch();
      watching.clear();
    };
    server.setRequestHandler('resources/subscribe', () => ({}));
    server.setRequestHandler('resources/unsubscribe', () => ({}));
  }

  const callerOf = (ctx: ServerContext): Caller => {
    const token = ctx.mcpReq._meta?.progressToken;
    const elicitation = server.getClientCapabilities()?.elicitation !== undefined;
    const canElicit = context.era === 'legacy' && elicitation;
    const byResult = context.era === 'modern' && elicitation;
    return {
      owner,
      signal: ctx.mcpReq.signal,
      ...(token === undefined
        ? {}
        : {
            progress: (done: number, total: number | undefined, message: string | undefined) =>
              ctx.mcpReq.notify({
                method: 'notifications/progress',
                params: {
                  progressToken: token,
                  progress: done,
                  ...(total === undefined ? {} : { total }),
                  ...(message === undefined ? {} : { message }),
                },
              }),
          }),
      ...(canElicit ? { elicit: (params: Record<string, unknown>) => ctx.mcpReq.elicitInput(params as never) } : {}),
      ...(byResult ? { inputRequired: { responses: ctx.mcpReq.inputResponses } } : {}),
    };
  };

  // T-47: a 2025 host on a connection of its own (stdio, an HTTP session) is pushed
  // `notifications/tasks/status` on each change of the tasks it made or joined on it; a stateless
  // HTTP request has no channel after its answer.
  const ownConnection = context.requestInfo === undefined || deps.sessionful.has(context.requestInfo);
  const pushTo =
    native && context.era === 'legacy' && ownConnection
      ? (taskId: string): void => {
          if (watching.has(taskId)) return;
          const send = (task: Parameters<typeof legacyStatusNotification>[0]): void => {
            server.notification(legacyStatusNotification(task) as never).catch(() => undefined);
          };
          watching.set(taskId, deps.pushes.watch(taskId, send));
        }
      : undefined;
  const frontDeps: FrontDeps = {
    front: deps.tasks,
    catalog,
    owner,
    ...(pushTo === undefined ? {} : { watch: pushTo }),
  };
  server.setRequestHandler('tools/list', async () => {
    const note = durableNote(deps.inlineWaitSeconds);
    const entries = await catalog.refresh();
    const missing = catalog.missing;
    // A 2025 host that declared tasks: every tool the bridge runs through its ledger may be a task (T-03).
    const taskTools = native && context.era === 'legacy' && (deps.front === 'tasks' || declaresLegacyTasks(server));
    const tools = entries.map((e) => {
      const listed = e.tool.durable
        ? { ...hostFacing(e.tool.listed, note), name: e.exposed }
        : { ...e.tool.listed, name: e.exposed };
      return taskTools && canRunAsTask(e) ? { ...listed, execution: { taskSupport: 'optional' } } : listed;
    });
    return {
      tools: [...tools, ...modelTools(deps.inlineWaitSeconds, missingNote(missing))],
      ...(missing.length === 0 ? {} : { _meta: { [MISSING_UPSTREAMS_META]: missing } }),
    } as never;
  });

  const callTool = async (params: { name: string; arguments?: Record<string, unknown> }, ctx: ServerContext) => {
    const { name } = params;
    const args = params.arguments ?? {};
    // Past this depth the call cannot be digested (nor, much deeper, serialised): invalid params.
    if (tooDeepForDigest(args)) {
      throw new ProtocolError(-32602, `arguments nest deeper than ${MAX_DIGEST_DEPTH} levels`);
    }
    const caller = callerOf(ctx);
    if ((MODEL_TOOL_NAMES as readonly string[]).includes(name))
      return modelCall(answers, operations, name, args, caller) as never;
    const entry = await catalog.find(name);
    const missing = catalog.missing;
    if (entry === undefined && missing.length > 0) {
      const down = missing.map((m) => `${m.upstream} (${m.reason})`).join(', ');
      return toolError(`${name}: not listed now; unreachable upstream: ${down}. Try again later.`);
    }
    if (entry === undefined) throw new ProtocolError(-32602, `Unknown tool: ${name}`);
    const silent = await catalog.unanswered(entry.upstream, Math.min(catalog.deadlineMs, operations.deps.inlineWaitMs));
    if (silent !== null) {
      return toolError(
        `${name}: its upstream ${entry.upstream.name} does not answer (${silent}); the call was not sent, nothing ran. ` +
          'Try again later.',
      );
    }
    // Only an upstream without any wire (never one `negotiate` connects) is called around the executor.
    // A host on the Tasks extension that declares it on this request: a task of the bridge's own, at once.
    if (native && context.era === 'modern' && declaresTasks(ctx)) {
      const task = await extToolCall(entry, args, frontDeps);
      if (task !== null) return task as never;
    }
    if (!entry.tool.viaExecutor)
      return (await passThrough(entry.upstream, entry.tool.name, args, ctx.mcpReq.signal)) as never;
    return (await operations.call(entry, args, caller)) as never;
  };
  server.setRequestHandler('tools/call', (request, ctx) => callTool(request.params, ctx));
  if (native && context.era === 'modern') installExtTaskMethods(server, frontDeps);
  if (native && context.era === 'legacy') {
    installLegacyTaskMethods(server, frontDeps);
    // The nested `{ task }` answer passes only the SDK's unvalidated fallback path (as on our server).
    server.removeRequestHandler('tools/call');
    server.fallbackRequestHandler = async (request, ctx) => {
      if (request.method !== 'tools/call') throw new ProtocolError(-32601, `Method not found: ${request.method}`);
      const task = await legacyTaskCall(request, frontDeps, (name) => catalog.find(name));
      if (task !== null) return task;
      return await callTool(request.params as { name: string; arguments?: Record<string, unknown> }, ctx);
    };
  }

  server.setRequestHandler('resources/templates/list', () => ({
    resourceTemplates: [
      {
        uriTemplate: `${OPERATION_URI_PREFIX}{id}`,
        name: 'operation',
        title: 'A long-running operation of this bridge',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler('resources/list', async () => {
    const { open, settled } = await operations.book.list(owner, 20);
    return {
      resources: [...open, ...settled].map((op) => ({
        uri: `${OPERATION_URI_PREFIX}${op.id}`,
        name: op.id,
        title: `${op.tool.name} (${op.state})`,
        mimeType: 'application/json',
      })),
    };
  });
  server.setRequestHandler('resources/read', async (request) => {
    const { uri } = request.params;
    const id = uri.startsWith(OPERATION_URI_PREFIX) ? uri.slice(OPERATION_URI_PREFIX.length) : '';
    const answer = await answers.status(id, { owner });
    if (answer.isError === true) throw new ProtocolError(-32002, `Resource not found: ${uri}`);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(answer.structuredContent) }] };
  });
  return server;
}

async function modelCall(
  answers: ModelAnswers,
  operations: BridgeOperations,
  name: string,
  args: Record<string, unknown>,
  caller: Caller,
) {
  if (name === 'terminus_operations') return answers.operations(caller);
  const operation = args.operation;
  if (typeof operation !== 'string' || operation === '') {
    return toolError(`${name} needs {"operation": "<id>"}; terminus_operations lists the ids.`);
  }
  if (name === 'terminus_wait') {
    const seconds = args.seconds;
    if (seconds !== undefined && (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0)) {
      return toolError('terminus_wait: `seconds` must be a non-negative number.');
    }
    return answers.wait(operation, seconds, caller);
  }
  if (name === 'terminus_status') return answers.status(operation, caller);
  if (name === 'terminus_cancel') return answers.cancel(operation, caller);
  if (name === 'terminus_logs') {
    const after = args.after;
    if (after !== undefined && (typeof after !== 'number' || !Number.isInteger(after) || after < 0)) {
      return toolError('terminus_logs: `after` must be a whole number, the `next` of the last answer.');
    }
    return answers.logs(operation, after, caller);
  }
  if (!isRecord(args.response)) {
    // Checked after the id, so a foreign id never learns more than an unknown one.
    return (await operations.book.own(caller.owner, operation)) === null
      ? unknownOperation(operation)
      : toolError('terminus_respond needs `response`: the answer object, or {"action":"decline"}.');
  }
  return answers.respond(operation, args.response, typeof args.key === 'string' ? args.key : undefined, caller);
}
