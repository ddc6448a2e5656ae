import type { Server, ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { isTerminusError } from '../../../core/errors.js';
import type { TaskRecord } from '../../../core/task.js';
import type { TaskEngine } from '../../../runner/engine-port.js';
import { ownerOf } from '../../owner.js';
import type { WireDeps } from '../adapter.js';
import { deliverInputRequests } from '../rev2025-11-25/input.js';
import { decodeLogQuery, encodeLogPage } from '../../task-logs.js';
import { decodeEventQuery, encodeEventPage, eventsMeta } from '../../task-events.js';
import { CANCEL_METHOD, EVENTS_METHOD, LOGS_METHOD, RESULT_METHOD, STATUS_METHOD } from './constants.js';
import { decodeTokenRef } from './decode.js';
import { encodeResult, encodeStatus, projectStatus, tokenOf } from './encode.js';
import { invalidToken, notCompleted, operationCancelled, operationExpired, toProtocolError } from './errors.js';

const LOOSE = z.looseObject({});
const SCHEMAS = { params: LOOSE, result: LOOSE };

/**
 * A token names a task by its submission key (the client's `operation.token`) or by its id, so a
 * task created on another wire is reachable here too. The id is tried first: it has no side effect,
 * whereas looking up an unused key burns it (S6): a status poll that overtakes its own `tools/call`
 * makes that call fail rather than run unobserved.
 */
export async function resolveToken(engine: TaskEngine, owner: string, token: string): Promise<TaskRecord> {
  try {
    return await engine.get(owner, token);
  } catch (error) {
    if (!isTerminusError(error, 'not_found')) throw error;
  }
  let found;
  try {
    found = await engine.lookupKey(owner, token);
  } catch (error) {
    // The key's task expired (S7): it was created, so this is not the never-created answer.
    if (isTerminusError(error, 'not_found')) throw operationExpired();
    throw error;
  }
  if (found.kind === 'found') return found.task;
  throw invalidToken();
}

type Handler = (params: Record<string, unknown>, ctx: ServerContext) => Promise<Record<string, unknown>>;

function guarded(body: Handler): Handler {
  return async (params, ctx) => {
    try {
      return await body(params, ctx);
    } catch (error) {
      throw toProtocolError(error);
    }
  };
}

/** Registers `tools/async/status`, `tools/async/result` and our `tools/async/cancel`, `tools/async/logs` and `tools/async/events`. */
export function installAsyncMethods(server: Server, deps: WireDeps): void {
  const { engine } = deps;

  server.setRequestHandler(
    STATUS_METHOD,
    SCHEMAS,
    guarded(async (params, ctx) => {
      const owner = ownerOf(ctx, deps.transport);
      const task = await resolveToken(engine, owner, decodeTokenRef(params).token);
      if (task.status === 'cancelled') throw operationCancelled();
      // L-20: queued server->client requests go out while the client polls, tagged with `_operation`.
      if (task.status === 'input_required') {
        const token = tokenOf(task);
        deliverInputRequests(task, ctx, { engine, owner, logger: deps.logger }, (p) => ({
          ...p,
          _operation: { token },
        }));
      }
      return { ...encodeStatus(task), _meta: eventsMeta(task) };
    }),
  );

  server.setRequestHandler(
    RESULT_METHOD,
    SCHEMAS,
    guarded(async (params, ctx) => {
      const task = await resolveToken(engine, ownerOf(ctx, deps.transport), decodeTokenRef(params).token);
      if (task.status === 'cancelled') throw operationCancelled();
      if (task.status !== 'completed') {
        const status = encodeStatus(task);
        throw notCompleted(projectStatus(task), status.error as string | undefined);
      }
      return encodeResult(task);
    }),
  );

  server.setRequestHandler(
    LOGS_METHOD,
    SCHEMAS,
    guarded(async (params, ctx) => {
      const owner = ownerOf(ctx, deps.transport);
      const task = await resolveToken(engine, owner, decodeTokenRef(params).token);
      const page = await engine.readLog(owner, task.id, decodeLogQuery(params));
      return { ...encodeLogPage(page), token: tokenOf(task) };
    }),
  );

  // Ours (issue 32): the operation's ordered events after a cursor, by token. The token resolves
  // first (unknown and foreign alike "Invalid token", S8); then the engine refuses a cursor of
  // another operation or one ahead of it. A cancelled operation still answers: its events say how
  // it ended.
  server.setRequestHandler(
    EVENTS_METHOD,
    SCHEMAS,
    guarded(async (params, ctx) => {
      const owner = ownerOf(ctx, deps.transport);
      const { token } = decodeTokenRef(params);
      const query = decodeEventQuery(params);
      const task = await resolveToken(engine, owner, token);
      return { ...encodeEventPage(await engine.readEvents(owner, task.id, query)), token: tokenOf(task) };
    }),
  );

  server.setRequestHandler(
    CANCEL_METHOD,
    SCHEMAS,
    guarded(async (params, ctx) => {
      const owner = ownerOf(ctx, deps.transport);
      const task = await resolveToken(engine, owner, decodeTokenRef(params).token);
      // Idempotent: a terminal operation is answered with its status, unchanged (S2).
      const { task: after } = await engine.cancel(owner, task.id);
      return encodeStatus(after);
    }),
  );
}
