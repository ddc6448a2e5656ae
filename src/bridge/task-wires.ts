/**
 * The bridge's native task front on each host wire, with the server's own codecs and errors so a
 * host sees exactly the shapes (and checklist errors) our server gives:
 * - 2026-07-28 Tasks extension (modern era): a `tools/call` that declares the extension on the
 *   request becomes a task at once (`CreateTaskResult`), then `tasks/get|update|cancel`;
 * - 2025-11-25 tasks (legacy era): a `tools/call` with `params.task` becomes a task (`{ task }`),
 *   then `tasks/get|result|list|cancel`, and `notifications/tasks/status` on each change (stdio).
 * A request that asks for neither gets the tool facade (`server.ts`), unchanged.
 */
import { ProtocolError, type JSONRPCRequest, type Server, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { TaskRecord } from '../core/task.js';
import { isTerminal } from '../core/task.js';
import {
  invalidParams as extInvalidParams,
  taskNotFoundError as extNotFound,
} from '../server/wire/tasks-ext/errors.js';
import { requireTasks } from '../server/wire/tasks-ext/gate.js';
import {
  encodeAck,
  encodeCreateTaskResult as extCreated,
  encodeGetTaskResult,
} from '../server/wire/tasks-ext/encode.js';
import { decodeTaskRef as extTaskRef } from '../server/wire/tasks-ext/decode.js';
import { INVALID_PARAMS_REASONS } from '../server/wire/tasks-ext/constants.js';
import {
  encodeCreateTaskResult as legacyCreated,
  encodeList,
  encodePayload,
  encodeTask as legacyTask,
  projectStatus,
} from '../server/wire/rev2025-11-25/encode.js';
import {
  decodeTaskRef as legacyTaskRef,
  decodeToolCall as legacyToolCall,
} from '../server/wire/rev2025-11-25/decode.js';
import {
  alreadyTerminalError,
  taskCancelledError,
  taskForbiddenError,
  toProtocolError as legacyError,
} from '../server/wire/rev2025-11-25/errors.js';
import { toProtocolError as extError } from '../server/wire/tasks-ext/errors.js';
import { RELATED_TASK_META } from '../server/wire/rev2025-11-25/constants.js';
import type { Catalog, CatalogEntry } from './catalog.js';
import type { TaskFront } from './task-front.js';

const LOOSE = z.looseObject({});
const SCHEMAS = { params: LOOSE, result: LOOSE };

/** `_meta` key of the bridge's own events cursor the server codec adds: the bridge serves no events method. */
const EVENTS_META = 'mcp-terminus.dev/events';

/** What each front handler needs. */
export interface FrontDeps {
  readonly front: TaskFront;
  readonly catalog: Catalog;
  readonly owner: string;
  /** Set where the host's session can take status pushes: called with each task it made or joined. */
  readonly watch?: (taskId: string) => void;
}

/** A catalog entry the bridge can run as a task of its own: every tool called through the executor. */
export function canRunAsTask(entry: CatalogEntry): boolean {
  return entry.tool.viaExecutor;
}

function withoutEventsMeta(answer: Record<string, unknown>): Record<string, unknown> {
  const meta = answer._meta as Record<string, unknown> | undefined;
  if (meta === undefined || !(EVENTS_META in meta)) return answer;
  const { [EVENTS_META]: _dropped, ...rest } = meta;
  const { _meta: _m, ...out } = answer;
  return Object.keys(rest).length === 0 ? out : { ...out, _meta: rest };
}

/**
 * `tools/call` on the Tasks extension: a task for a tool the bridge runs through the executor; a
 * tool it cannot (an upstream without any wire) answers `null`, and the facade runs it inline.
 */
export async function extToolCall(
  entry: CatalogEntry,
  args: Record<string, unknown>,
  deps: FrontDeps,
): Promise<Record<string, unknown> | null> {
  if (!canRunAsTask(entry)) return null;
  try {
    const made = await deps.front.create(entry, args, deps.owner);
    return made === null ? null : withoutEventsMeta({ ...extCreated(made.task, made.created) });
  } catch (error) {
    throw extError(error);
  }
}

/** `tasks/get|update|cancel` of the Tasks extension, gated (-32021 first, X-47) and owned (S8). */
export function installExtTaskMethods(server: Server, deps: FrontDeps): void {
  const method =
    (name: string, body: (params: Record<string, unknown>, ctx: ServerContext) => Promise<Record<string, unknown>>) =>
    async (params: Record<string, unknown>, ctx: ServerContext) => {
      requireTasks(ctx, name);
      try {
        return await body(params, ctx);
      } catch (error) {
        throw extError(error);
      }
    };
  server.setRequestHandler(
    'tasks/get',
    SCHEMAS,
    method('tasks/get', async (params) => {
      const { taskId } = extTaskRef(params);
      return withoutEventsMeta({ ...encodeGetTaskResult(await deps.front.get(deps.owner, taskId)) });
    }),
  );
  server.setRequestHandler(
    'tasks/update',
    SCHEMAS,
    method('tasks/update', async (params, ctx) => {
      const { taskId } = extTaskRef(params);
      await deps.front.respond(deps.owner, taskId, ctx.mcpReq.inputResponses ?? {});
      return { ...encodeAck() };
    }),
  );
  server.setRequestHandler(
    'tasks/cancel',
    SCHEMAS,
    method('tasks/cancel', async (params) => {
      const { taskId } = extTaskRef(params);
      await deps.front.cancel(deps.owner, taskId);
      return { ...encodeAck() };
    }),
  );
}

/** An unknown tool on the Tasks extension: the wire's own `-32602` (`unknown_tool`). */
export function extUnknownTool(name: string): ProtocolError {
  return extInvalidParams(`Unknown tool: ${name}`, INVALID_PARAMS_REASONS.unknownTool, { tool: name });
}

export { extNotFound };

/**
 * `tools/call` with `params.task` on 2025-11-25: the nested `{ task }` after the ledger holds the
 * operation (T-15, T-16); a tool the bridge cannot run as a task gets `-32601` (T-10). Returns
 * `null` for a call without `params.task` (the facade answers it).
 */
export async function legacyTaskCall(
  request: JSONRPCRequest,
  deps: FrontDeps,
  entryOf: (name: string) => Promise<CatalogEntry | undefined>,
): Promise<Record<string, unknown> | null> {
  const call = legacyToolCall(request.params);
  if (call.task === undefined) return null;
  const entry = await entryOf(call.tool);
  if (entry === undefined) return null;
  if (!canRunAsTask(entry)) throw taskForbiddenError(entry.exposed);
  try {
    // T-34, T-35: the host's `task.ttl` is a request; the task reports the ttl granted (T-80 cap).
    const made = await deps.front.create(entry, call.args, deps.owner, deps.front.grantTtl(call.task.ttlMs));
    if (made === null) throw taskForbiddenError(entry.exposed);
    deps.watch?.(made.task.id);
    return { ...legacyCreated(made.task) };
  } catch (error) {
    throw legacyError(error);
  }
}

/** `tasks/get|result|list|cancel` of 2025-11-25 (T-20, T-38..T-41, T-56, T-62, T-64, T-68). */
export function installLegacyTaskMethods(server: Server, deps: FrontDeps): void {
  const guarded =
    (body: (params: Record<string, unknown>, ctx: ServerContext) => Promise<Record<string, unknown>>) =>
    async (params: Record<string, unknown>, ctx: ServerContext) => {
      try {
        return await body(params, ctx);
      } catch (error) {
        throw legacyError(error);
      }
    };
  server.setRequestHandler(
    'tasks/get',
    SCHEMAS,
    guarded(async (params) => {
      const { taskId } = legacyTaskRef(params);
      return { ...legacyTask(await deps.front.get(deps.owner, taskId)) };
    }),
  );
  server.setRequestHandler(
    'tasks/result',
    SCHEMAS,
    guarded(async (params, ctx) => {
      const { taskId } = legacyTaskRef(params);
      // T-39: held until terminal; the upstream's questions go to a host that declared elicitation
      // as `elicitation/create` on this request's stream, tied to the task (T-43).
      const canElicit = server.getClientCapabilities()?.elicitation !== undefined;
      const elicit = canElicit
        ? (params: Record<string, unknown>) =>
            ctx.mcpReq.elicitInput({ ...params, _meta: { [RELATED_TASK_META]: { taskId } } } as never)
        : undefined;
      let task = await deps.front.get(deps.owner, taskId);
      while (!isTerminal(task.status)) {
        task = await deps.front.settled(deps.owner, taskId, ctx.mcpReq.signal, elicit);
        if (task.status === 'input_required' && elicit === undefined) break;
      }
      const payload = encodePayload(task);
      if (payload?.kind === 'result') return payload.result;
      if (payload?.kind === 'error')
        throw new ProtocolError(payload.error.code, payload.error.message, payload.error.data);
      if (payload?.kind === 'cancelled') throw taskCancelledError();
      throw new ProtocolError(
        -32600,
        'The task needs input and this host declared no elicitation: answer it with terminus_respond',
        { status: task.status },
      );
    }),
  );
  server.setRequestHandler(
    'tasks/list',
    SCHEMAS,
    guarded(async () => ({ ...encodeList(await deps.front.list(deps.owner), null) })),
  );
  server.setRequestHandler(
    'tasks/cancel',
    SCHEMAS,
    guarded(async (params) => {
      const { taskId } = legacyTaskRef(params);
      const { task, wasTerminal } = await deps.front.cancel(deps.owner, taskId);
      if (wasTerminal) throw alreadyTerminalError(projectStatus(task));
      return { ...legacyTask(task) };
    }),
  );
}

/** `notifications/tasks/status` for a task of this host: the full `Task`, no related-task `_meta` (T-47, T-49). */
export function legacyStatusNotification(task: TaskRecord): { method: string; params: Record<string, unknown> } {
  return { method: 'notifications/tasks/status', params: { ...legacyTask(task) } };
}
