import { isTerminusError } from '../core/errors.js';
import type { TaskRecord, TaskStatus, WireName } from '../core/task.js';
import { TASK_STATUSES, WIRES } from '../core/task.js';
import type { TaskEngine } from '../runner/engine-port.js';
import { route, type HttpRequestInfo, type HttpRoute } from '../server/http/routes.js';
import { ownerOf } from '../server/owner.js';
import { detailPage, errorPage, listPage, type ListFilters } from './pages.js';
import { timelineOf, type TimelineRecorder } from './timeline.js';

/** What the console serves: an engine, and optionally what this node saw happen. */
export interface ConsoleOptions {
  readonly engine: TaskEngine;
  /** What this node saw happen to tasks (claims with their node, run ends); pass its observer to the engine. */
  readonly timeline?: TimelineRecorder;
}

/** Tasks on one list page; the store clamps to 1..1000. */
const PAGE_SIZE = 100;

/**
 * The web console: `GET /console` (the caller's tasks, filtered by status, tool and wire),
 * `GET /console/tasks/:id` (record, timeline, result, forms), and `POST .../cancel` and
 * `POST .../answer` (HTML forms; each answers 303 to the task's page). Server-rendered, no script.
 *
 * The caller is whoever the server's `authenticate` hook says, with the same owner rule as every
 * wire (S8): it sees and acts on its own tasks only. A POST whose `Origin` is not this server's is
 * refused (403), so another site cannot make a signed-in browser cancel a task.
 */
export function consoleRoutes(options: ConsoleOptions): HttpRoute[] {
  const { engine } = options;
  const owner = (info: HttpRequestInfo): string => ownerOf({ http: { authInfo: info.authInfo } }, 'http');
  const tools = [...engine.tools.keys()].sort();

  const list = async (request: Request, info: HttpRequestInfo): Promise<Response> => {
    const filters = readFilters(new URL(request.url).searchParams, tools);
    const page = await engine.list(owner(info), {
      limit: PAGE_SIZE,
      ...(filters.cursor === '' ? {} : { cursor: filters.cursor }),
      ...(filters.status.length === 0 ? {} : { status: filters.status as TaskStatus[] }),
      ...(filters.wire === '' ? {} : { wire: filters.wire as WireName }),
    });
    // The store filters by status and wire; the tool filter applies to the page it returned.
    const tasks = filters.tool === '' ? page.tasks : page.tasks.filter((t) => t.tool === filters.tool);
    return htmlResponse(listPage({ caller: owner(info), tasks, tools, filters, nextCursor: page.nextCursor }));
  };

  const detail = async (request: Request, info: HttpRequestInfo): Promise<Response> => {
    const task = await find(info);
    if (task === null) return htmlResponse(errorPage(owner(info), 404, 'No such task.'), 404);
    const notice = new URL(request.url).searchParams.get('notice');
    const timeline = timelineOf(task, options.timeline?.events(task.id) ?? []);
    return htmlResponse(detailPage({ caller: owner(info), task, timeline, ...(notice === null ? {} : { notice }) }));
  };

  const cancel = async (request: Request, info: HttpRequestInfo): Promise<Response> => {
    const refused = checkOrigin(request);
    if (refused !== undefined) return refused;
    const id = info.params['id'] ?? '';
    try {
      const outcome = await engine.cancel(owner(info), id);
      const notice =
        outcome.outcome === 'cancelled' ? 'Cancelled.' : `Not cancelled: the task was already ${outcome.task.status}.`;
      return seeOther(id, notice);
    } catch (error) {
      if (isTerminusError(error, 'not_found')) return htmlResponse(errorPage(owner(info), 404, 'No such task.'), 404);
      throw error;
    }
  };

  const answer = async (request: Request, info: HttpRequestInfo): Promise<Response> => {
    const refused = checkOrigin(request);
    if (refused !== undefined) return refused;
    const task = await find(info);
    if (task === null) return htmlResponse(errorPage(owner(info), 404, 'No such task.'), 404);
    const form = new URLSearchParams(info.body?.toString('utf8') ?? '');
    const key = form.get('key') ?? '';
    const asked = task.inputRequests[key];
    if (asked === undefined || Object.hasOwn(task.inputResponses, key))
      return seeOther(task.id, 'That input request is not open.');
    const action = form.get('action') === 'decline' ? 'decline' : 'accept';
    const reply = action === 'accept' ? { action, content: contentOf(form, asked.params) } : { action };
    await engine.respond(owner(info), task.id, { [key]: reply });
    return seeOther(task.id, action === 'accept' ? 'Answer sent.' : 'Declined.');
  };

  const find = async (info: HttpRequestInfo): Promise<TaskRecord | null> => {
    try {
      return await engine.get(owner(info), info.params['id'] ?? '');
    } catch (error) {
      if (isTerminusError(error, 'not_found')) return null;
      throw error;
    }
  };

  return [
    route('GET', '/console', list),
    route('GET', '/console/tasks/:id', detail),
    route('POST', '/console/tasks/:id/cancel', cancel, { body: 'form' }),
    route('POST', '/console/tasks/:id/answer', answer, { body: 'form' }),
  ];
}

function readFilters(params: URLSearchParams, tools: readonly string[]): ListFilters {
  const status = params.getAll('status').filter((s) => (TASK_STATUSES as readonly string[]).includes(s));
  const tool = params.get('tool') ?? '';
  const wire = params.get('wire') ?? '';
  return {
    status,
    tool: tools.includes(tool) ? tool : '',
    wire: (WIRES as readonly string[]).includes(wire) ? wire : '',
    cursor: params.get('cursor') ?? '',
  };
}

/** The form's `field.<name>` values typed by the request's schema; an unticked boolean is false. */
function contentOf(form: URLSearchParams, params: Record<string, unknown>): Record<string, unknown> {
  const schema = params['requestedSchema'] as { properties?: Record<string, { type?: string }> } | undefined;
  const content: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const raw = form.get(`field.${name}`);
    if (property.type === 'boolean') content[name] = raw === 'true';
    else if (raw === null || raw === '') continue;
    else if (property.type === 'number' || property.type === 'integer') content[name] = Number(raw);
    else content[name] = raw;
  }
  return content;
}

/** Browsers send `Origin` on every form POST; one naming another host is a cross-site request. */
function checkOrigin(request: Request): Response | undefined {
  const origin = request.headers.get('origin');
  const host = request.headers.get('host');
  if (origin === null || host === null) return undefined;
  try {
    if (new URL(origin).host === host) return undefined;
  } catch {
    // An unparsable Origin is refused like a foreign one.
  }
  return new Response('cross-site request refused', { status: 403, headers: { 'content-type': 'text/plain' } });
}

function seeOther(id: string, notice: string): Response {
  const location = `/console/tasks/${encodeURIComponent(id)}?notice=${encodeURIComponent(notice)}`;
  return new Response(null, { status: 303, headers: { location } });
}

function htmlResponse(body: string, status = 200): Response {
  return new Response(body, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      // Nothing on these pages loads from elsewhere; no script at all.
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    },
  });
}
