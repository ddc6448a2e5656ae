import type { Server } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { FastContext, FastMethod } from '../../http/fast-path.js';
import { ownerOf } from '../../owner.js';
import { decodeEventQuery, encodeEventPage, EVENTS_METHOD } from '../../task-events.js';
import { decodeLogQuery, encodeLogPage, LOGS_METHOD } from '../../task-logs.js';
import type { WireDeps } from '../adapter.js';
import { LOOKUP_METHOD } from './constants.js';
import { checkResponses, decodeLookup, decodeTaskRef, decodeUpdate } from './decode.js';
import { encodeAck, encodeGetTaskResult, encodeLookupFound, encodeLookupNeverCreated } from './encode.js';
import { toProtocolError } from './errors.js';
import { requireTasks } from './gate.js';
import { callTool, fastToolCall } from './tool-call.js';

/**
 * Loose on purpose: the SDK validates params before the handler runs, and a strict schema would
 * answer `-32602` before our `-32021` gate. Decoding happens after the gate.
 */
const LOOSE = z.looseObject({});
const SCHEMAS = { params: LOOSE, result: LOOSE };

/** What the methods read of a request: the SDK's `ServerContext`, or the fast path's own (`FastContext`). */
type Body = (params: Record<string, unknown>, ctx: FastContext, deps: WireDeps) => Promise<Record<string, unknown>>;
type Handler = FastMethod;

/** Gate, then decode, then one engine command, then encode; engine errors become JSON-RPC errors. */
function taskMethod(method: string, body: Body): (deps: WireDeps) => Handler {
  return (deps) => async (params, ctx) => {
    requireTasks(ctx, method);
    try {
      return await body(params, ctx, deps);
    } catch (error) {
      throw toProtocolError(error);
    }
  };
}

const getTask = taskMethod('tasks/get', async (params, ctx, deps) => {
  const { taskId } = decodeTaskRef(params);
  return encodeGetTaskResult(await deps.engine.get(ownerOf(ctx, deps.transport), taskId));
});

/** Responses are applied before the ack, so the next `tasks/get` already reflects them (reference 2.5). */
const updateTask = taskMethod('tasks/update', async (params, ctx, deps) => {
  const { taskId, responses } = decodeUpdate(params, ctx.mcpReq.inputResponses);
  const owner = ownerOf(ctx, deps.transport);
  if (Object.keys(responses).length > 0) {
    checkResponses(responses, (await deps.engine.get(owner, taskId)).inputRequests);
  }
  await deps.engine.respond(owner, taskId, responses);
  return encodeAck();
});

/** Idempotent: a terminal task is acked unchanged (`tasks-cancel-terminal-idempotent-ack`). */
const cancelTask = taskMethod('tasks/cancel', async (params, ctx, deps) => {
  const { taskId } = decodeTaskRef(params);
  await deps.engine.cancel(ownerOf(ctx, deps.transport), taskId);
  return encodeAck();
});

/** `terminus/tasks/lookup`: find by submission key; an unused key is burned (S6). */
const lookupTask = taskMethod(LOOKUP_METHOD, async (params, ctx, deps) => {
  const { submissionKey } = decodeLookup(params);
  const found = await deps.engine.lookupKey(ownerOf(ctx, deps.transport), submissionKey);
  return found.kind === 'found' ? encodeLookupFound(found.task) : encodeLookupNeverCreated();
});

/**
 * `terminus/tasks/logs`: a page of the task's own log. Gated and owned like `tasks/get` (X-47, S8):
 * a foreign id gets the same `-32602` as an unknown one.
 */
const taskLogs = taskMethod(LOGS_METHOD, async (params, ctx, deps) => {
  const { taskId } = decodeTaskRef(params);
  const query = decodeLogQuery(params);
  return { ...encodeLogPage(await deps.engine.readLog(ownerOf(ctx, deps.transport), taskId, query)) };
});

/**
 * `terminus/tasks/events`: a page of the task's ordered events after a cursor (issue 32). Gated and
 * owned like `tasks/get` (X-47, S8): a foreign id gets the same `-32602` as an unknown one, and a
 * bad cursor is a `-32602` naming `cursor`.
 */
const taskEvents = taskMethod(EVENTS_METHOD, async (params, ctx, deps) => {
  const { taskId } = decodeTaskRef(params);
  const query = decodeEventQuery(params);
  return { ...encodeEventPage(await deps.engine.readEvents(ownerOf(ctx, deps.transport), taskId, query)) };
});

/** The task methods by name: registered on each SDK `Server`, and served as they are by the HTTP fast path. */
const TASK_METHODS: Readonly<Record<string, (deps: WireDeps) => Handler>> = {
  'tasks/get': getTask,
  'tasks/update': updateTask,
  'tasks/cancel': cancelTask,
  [LOOKUP_METHOD]: lookupTask,
};

/**
 * The same handlers for the fast path (`WireAdapter.fastMethods`): one code path decides every
 * answer, whether the SDK or the fast path delivered the request. `tools/call` is there for the
 * calls that create a task (`fastToolCall`).
 */
export function taskFastMethods(deps: WireDeps): ReadonlyMap<string, FastMethod> {
  return new Map([
    ...Object.entries(TASK_METHODS).map(([method, make]): [string, FastMethod] => [method, make(deps)]),
    ['tools/call', fastToolCall(deps)],
  ]);
}

/** Registers `tools/call` and the task methods of the extension on one SDK `Server`. */
export function installTaskMethods(server: Server, deps: WireDeps): void {
  server.setRequestHandler('tools/call', (request, ctx) => callTool(request.params, ctx, deps) as never);
  for (const [method, make] of Object.entries(TASK_METHODS)) server.setRequestHandler(method, SCHEMAS, make(deps));
  // Through the SDK only: the fast path's differential test does not cover it (yet).
  server.setRequestHandler(LOGS_METHOD, SCHEMAS, taskLogs(deps));
  server.setRequestHandler(EVENTS_METHOD, SCHEMAS, taskEvents(deps));
}
