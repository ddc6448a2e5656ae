import { isTerminal } from '../../../core/task.js';
import { isTerminusError } from '../../../core/errors.js';
import { route, type HttpRequestInfo, type HttpRoute } from '../../http/routes.js';
import { ownerOf } from '../../owner.js';
import { decodeEventSearch, encodeEventPage } from '../../task-events.js';
import { decodeLogSearch, encodeLogPage } from '../../task-logs.js';
import type { WireDeps } from '../adapter.js';
import {
  decodeDuration,
  decodeJsonBody,
  decodeListQuery,
  decodeOperationSegment,
  decodeRunBody,
  decodeToolSegment,
} from './decode.js';
import { encodeListOperations, encodeOperation } from './encode.js';
import { AipError, invalidArgument, operationNotFound, toAipError } from './errors.js';
import { decodeCallWebhook } from '../../../runner/webhooks.js';

/**
 * The `google.longrunning.Operations` service over HTTP/JSON (reference 3.2), plus one submission
 * route per tool. Same `authenticate` hook and owner derivation as the MCP routes: a caller sees only
 * its own operations, and a foreign name is NOT_FOUND like an unknown one (S8).
 *
 * | route | RPC |
 * | --- | --- |
 * | `POST /v1/tools/{tool}:run` `{arguments, requestId}` | submit; returns the `Operation` |
 * | `GET /v1/operations/{id}` | GetOperation |
 * | `GET /v1/operations?filter=&page_size=&page_token=` | ListOperations |
 * | `POST /v1/operations/{id}:cancel` | CancelOperation -> `{}` |
 * | `POST /v1/operations/{id}:wait` `{timeout: "30s"}` | WaitOperation |
 * | `DELETE /v1/operations/{id}` | DeleteOperation -> `{}` |
 * | `GET /v1/operations/{id}/logs?after=&limit=` | ours (issue 18): a page of the task's own log |
 * | `GET /v1/operations/{id}/events?cursor=&limit=` | ours (issue 32): a page of the task's ordered events |
 */
export function aipRoutes(deps: WireDeps): HttpRoute[] {
  const { engine } = deps;
  const owner = (info: HttpRequestInfo): string => ownerOf({ http: { authInfo: info.authInfo } }, deps.transport);

  const run = handler(async (_request, info) => {
    const { tool, verb } = decodeToolSegment(info.params.tool ?? '');
    if (verb !== 'run')
      throw new AipError('NOT_FOUND', 'method_not_found', `Unknown method: ${verb ?? '(none)'}; use {tool}:run`);
    if (!engine.tools.has(tool)) throw new AipError('NOT_FOUND', 'tool_not_found', `Unknown tool: ${tool}`);
    const { args, requestId, webhook } = decodeRunBody(decodeJsonBody(info.body));
    const { task } = await engine.submit({
      owner: owner(info),
      tool,
      args,
      wire: 'aip-151',
      ...(requestId === undefined ? {} : { submissionKey: requestId }),
      ...(webhook === undefined ? {} : { webhook: decodeCallWebhook(webhook) }),
    });
    return json(encodeOperation(task));
  });

  const list = handler(async (request, info) => {
    const query = decodeListQuery(new URL(request.url).searchParams);
    if (query.status !== undefined && query.status.length === 0) return json(encodeListOperations([], null));
    try {
      const page = await engine.list(owner(info), {
        limit: query.pageSize,
        ...(query.pageToken === undefined ? {} : { cursor: query.pageToken }),
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(query.wire === undefined ? {} : { wire: query.wire }),
      });
      return json(encodeListOperations(page.tasks, page.nextCursor));
    } catch (error) {
      if (isTerminusError(error, 'invalid_argument')) throw invalidArgument('invalid page_token', 'invalid_page_token');
      throw error;
    }
  });

  const get = handler(async (_request, info) => {
    const { id, verb } = decodeOperationSegment(info.params.op ?? '');
    if (verb !== undefined) throw operationNotFound();
    return json(encodeOperation(await engine.get(owner(info), id)));
  });

  const logs = handler(async (request, info) => {
    const { id, verb } = decodeOperationSegment(info.params.op ?? '');
    if (verb !== undefined) throw operationNotFound();
    const query = decodeLogSearch(new URL(request.url).searchParams);
    return json(encodeLogPage(await engine.readLog(owner(info), id, query)));
  });

  const events = handler(async (request, info) => {
    const { id, verb } = decodeOperationSegment(info.params.op ?? '');
    if (verb !== undefined) throw operationNotFound();
    const query = decodeEventSearch(new URL(request.url).searchParams);
    return json(encodeEventPage(await engine.readEvents(owner(info), id, query)));
  });

  const custom = handler(async (request, info) => {
    const { id, verb } = decodeOperationSegment(info.params.op ?? '');
    if (verb === 'cancel') {
      // G-24: best effort, answers Empty; a terminal operation is left as it is (S2), no error.
      await engine.cancel(owner(info), id);
      return json({});
    }
    if (verb === 'wait') {
      const timeoutMs = decodeDuration(decodeJsonBody(info.body).timeout);
      return json(encodeOperation(await waitUntilDone(deps, owner(info), id, timeoutMs, request.signal)));
    }
    throw new AipError('NOT_FOUND', 'method_not_found', `Unknown method: ${verb ?? '(none)'}`);
  });

  const remove = handler(async (_request, info) => {
    const { id, verb } = decodeOperationSegment(info.params.op ?? '');
    if (verb !== undefined) throw operationNotFound();
    // G-26: the client lost interest; this never cancels. The store has no delete, so the operation
    // stays readable until its retention ends (documented gap).
    await engine.get(owner(info), id);
    return json({});
  });

  const unknown = handler(() => Promise.reject(new AipError('NOT_FOUND', 'route_not_found', 'No such route')));

  return [
    route('POST', '/v1/tools/:tool', run),
    route('GET', '/v1/operations', list),
    route('GET', '/v1/operations/:op', get),
    route('GET', '/v1/operations/:op/logs', logs),
    route('GET', '/v1/operations/:op/events', events),
    route('POST', '/v1/operations/:op', custom),
    route('DELETE', '/v1/operations/:op', remove),
    route('*', '/v1/*', unknown),
  ];
}

/** G-27: returns when done, at the timeout, or when the client leaves, whichever is first. */
async function waitUntilDone(deps: WireDeps, owner: string, id: string, timeoutMs: number, signal: AbortSignal) {
  const deadline = Date.now() + timeoutMs;
  let task = await deps.engine.get(owner, id);
  while (!isTerminal(task.status)) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    task = await deps.engine.waitForChange(owner, id, { sinceUpdatedAt: task.updatedAt, timeoutMs: remaining, signal });
  }
  return task;
}

function handler(body: (request: Request, info: HttpRequestInfo) => Promise<Response>) {
  return async (request: Request, info: HttpRequestInfo): Promise<Response> => {
    try {
      return await body(request, info);
    } catch (error) {
      return toAipError(error).toResponse();
    }
  };
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}
