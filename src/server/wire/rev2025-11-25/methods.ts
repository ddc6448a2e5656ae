import { ProtocolError, type Server, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { isTerminusError } from '../../../core/errors.js';
import { isTerminal } from '../../../core/task.js';
import { ownerOf, type OwnerFacts } from '../../owner.js';
import { decodeEventQuery, encodeEventPage, EVENTS_METHOD, eventsMeta } from '../../task-events.js';
import { decodeLogQuery, encodeLogPage, LOGS_METHOD } from '../../task-logs.js';
import type { WireDeps } from '../adapter.js';
import { LIST_PAGE_SIZE, REASONS, RESULT_WAIT_SLICE_MS } from './constants.js';
import { decodeList, decodeTaskRef } from './decode.js';
import { encodeList, encodePayload, encodeTask, projectStatus } from './encode.js';
import {
  alreadyTerminalError,
  invalidParams,
  listNotOfferedError,
  taskCancelledError,
  toProtocolError,
} from './errors.js';
import { deliverInputRequests } from './input.js';

/** Loose: decoding (and its `-32602`s) happens in the handler, with our messages. */
const LOOSE = z.looseObject({});
const SCHEMAS = { params: LOOSE, result: LOOSE };

type Handler<C = ServerContext> = (params: Record<string, unknown>, ctx: C) => Promise<Record<string, unknown>>;

function guarded<C>(body: Handler<C>): Handler<C> {
  return async (params, ctx) => {
    try {
      return await body(params, ctx);
    } catch (error) {
      throw toProtocolError(error);
    }
  };
}

/**
 * Whether the caller is identified well enough to list tasks (T-77): an authenticated principal, or
 * the one client of a stdio process. Anonymous HTTP callers share one owner, so a list would show
 * them each other's tasks; they get neither the capability nor the method.
 */
export function canList(ctx: Pick<ServerContext, 'http'>, deps: Pick<WireDeps, 'transport'>): boolean {
  if (deps.transport === 'stdio') return true;
  const clientId = ctx.http?.authInfo?.clientId;
  return typeof clientId === 'string' && clientId.length > 0;
}

/** What `tasks/get` and `tasks/cancel` read of a request: the owner facts (the SDK context, or the fast path's). */
type OwnedHandler = Handler<OwnerFacts>;

const getTask = (deps: WireDeps): OwnedHandler =>
  guarded(async (params, ctx) => {
    const { taskId } = decodeTaskRef(params);
    const task = await deps.engine.get(ownerOf(ctx, deps.transport), taskId);
    return { ...encodeTask(task), _meta: eventsMeta(task) };
  });

const cancelTask = (deps: WireDeps): OwnedHandler =>
  guarded(async (params, ctx) => {
    const { taskId } = decodeTaskRef(params);
    const { outcome, task } = await deps.engine.cancel(ownerOf(ctx, deps.transport), taskId);
    // T-62: a terminal task is refused and keeps its status; T-64: the answer already shows `cancelled`.
    if (outcome === 'already_terminal') throw alreadyTerminalError(projectStatus(task));
    return { ...encodeTask(task) };
  });

/**
 * `tasks/get` and `tasks/cancel` for the fast paths (HTTP sessions, stdio): the very handlers
 * `installTaskMethods` registers, so one code path decides every answer whichever path delivered
 * the request. Each reads only `params.taskId` and the owner facts (`ownerOf`).
 */
export function legacyFastMethods(deps: WireDeps): ReadonlyMap<string, OwnedHandler> {
  return new Map([
    ['tasks/get', getTask(deps)],
    ['tasks/cancel', cancelTask(deps)],
  ]);
}

/** Registers `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` and `terminus/tasks/logs` on one legacy-era `Server`. */
export function installTaskMethods(server: Server, deps: WireDeps): void {
  const { engine } = deps;

  server.setRequestHandler('tasks/get', SCHEMAS, getTask(deps));

  server.setRequestHandler(
    'tasks/result',
    SCHEMAS,
    guarded(async (params, ctx) => {
      const { taskId } = decodeTaskRef(params);
      const owner = ownerOf(ctx, deps.transport);
      let task = await engine.get(owner, taskId);
      // T-39: hold the response until terminal, delivering input requests meanwhile (reference 1.11).
      while (!isTerminal(task.status)) {
        if (task.status === 'input_required') deliverInputRequests(task, ctx, { engine, owner, logger: deps.logger });
        task = await engine.waitForChange(owner, taskId, {
          sinceUpdatedAt: task.updatedAt,
          timeoutMs: RESULT_WAIT_SLICE_MS,
          signal: ctx.mcpReq.signal,
        });
      }
      const payload = encodePayload(task);
      if (payload?.kind === 'result') return payload.result;
      if (payload?.kind === 'error')
        throw new ProtocolError(payload.error.code, payload.error.message, payload.error.data);
      throw taskCancelledError();
    }),
  );

  server.setRequestHandler(
    'tasks/list',
    SCHEMAS,
    guarded(async (params, ctx) => {
      if (!canList(ctx, deps)) throw listNotOfferedError();
      const { cursor } = decodeList(params);
      try {
        const page = await engine.list(ownerOf(ctx, deps.transport), {
          limit: LIST_PAGE_SIZE,
          ...(cursor === undefined ? {} : { cursor }),
        });
        return { ...encodeList(page.tasks, page.nextCursor) };
      } catch (error) {
        // T-60: the only `invalid_argument` a list raises is the cursor.
        if (isTerminusError(error, 'invalid_argument')) throw invalidParams('Invalid cursor', REASONS.invalidCursor);
        throw error;
      }
    }),
  );

  // Ours (issue 18): a page of the task's own log, owned like `tasks/get` (T-73: foreign = unknown).
  server.setRequestHandler(
    LOGS_METHOD,
    SCHEMAS,
    guarded(async (params, ctx) => {
      const { taskId } = decodeTaskRef(params);
      const query = decodeLogQuery(params);
      return { ...encodeLogPage(await engine.readLog(ownerOf(ctx, deps.transport), taskId, query)) };
    }),
  );

  // Ours (issue 32): a page of the task's ordered events after a cursor, owned like `tasks/get`.
  server.setRequestHandler(
    EVENTS_METHOD,
    SCHEMAS,
    guarded(async (params, ctx) => {
      const { taskId } = decodeTaskRef(params);
      const query = decodeEventQuery(params);
      const page = await engine.readEvents(ownerOf(ctx, deps.transport), taskId, query);
      return { ...encodeEventPage(page, projectStatus) };
    }),
  );

  server.setRequestHandler('tasks/cancel', SCHEMAS, cancelTask(deps));
}
