import type { WebhookOutbox } from '../store/outbox-port.js';
import { webhookSection } from './webhooks.js';
import { isTerminusError } from '../core/errors.js';
import type { TaskRecord, TaskStatus, WireName } from '../core/task.js';
import { TASK_STATUSES, WIRES } from '../core/task.js';
import type { TaskEngine } from '../runner/engine-port.js';
import { route, type HttpRequestInfo, type HttpRoute } from '../server/http/routes.js';
import { ownerOf, principalOf } from '../server/owner.js';
import { checkOrigin, htmlResponse } from './answers.js';
import { CONSOLE_LOG_LINES, logSection } from './log.js';
import { ConsoleSessions, type ConsoleSignIn } from './sign-in.js';
import { detailPage, errorPage, listPage, ownerQuery, type ListFilters } from './pages.js';
import { timelineOf, type TimelineRecorder } from './timeline.js';

/** What the console serves: an engine, and optionally what this node saw happen. */
export interface ConsoleOptions {
  readonly engine: TaskEngine;
  /** What this node saw happen to tasks (claims with their node, run ends); pass its observer to the engine. */
  readonly timeline?: TimelineRecorder;
  /** The store's webhook outbox: the task page shows each delivery and its attempts (issue 32). */
  readonly outbox?: Pick<WebhookOutbox, 'readDeliveries'>;
  /**
   * Principals with the operator role (as `principalOf` names them: `token:ops`,
   * `jwt:https://login.example.com/#alice`, `auth:<clientId>` for a hook of your own): they see
   * and act on every owner's tasks and may filter the list by owner. An unauthenticated caller is
   * never one.
   */
  readonly operators?: readonly string[];
  /**
   * List anonymous tasks to an anonymous caller (one person on a loopback console without
   * credentials). Off by default: an anonymous caller holds capabilities, never a namespace, so it
   * opens a task by its id and its list shows nothing. The CLI allows it on a loopback host only.
   */
  readonly listAnonymous?: boolean;
  /**
   * How the reader of an unlisted page would turn `listAnonymous` on, named on that page (default
   * `listAnonymous: true`; the CLI names its flag).
   */
  readonly listAnonymousSwitch?: string;
  /**
   * Sign-in for browsers when the server authenticates (`sign-in.ts`): a token form, then a session
   * cookie whose principal is the token's. Without it a browser needs a bearer header, which it
   * cannot send. The CLI passes `{ verify: verifyBearer(authenticate) }` under `--auth-*`.
   */
  readonly signIn?: ConsoleSignIn;
}

/** Tasks on one list page; the store clamps to 1..1000. */
const PAGE_SIZE = 100;

/**
 * The web console: `GET /console` (the caller's tasks, filtered by status, tool and wire),
 * `GET /console/tasks/:id` (record, timeline, the task's own log by `?log_after=` cursor, result, forms), and `POST .../cancel` and
 * `POST .../answer` (HTML forms; each answers 303 to the task's page). Server-rendered, no script.
 *
 * The caller is whoever the server's `authenticate` hook says, with the same owner rule as every
 * wire (S8): it sees and acts on its own tasks only. A caller whose principal is in `operators`
 * sees every owner's tasks (`?owner=` filters the list; a task's links and forms carry `?owner=`
 * naming the task's owner, since every store read is by owner and id). A POST whose `Origin` is not this server's is
 * refused (403), so another site cannot make a signed-in browser cancel a task; under a sign-in
 * session (`signIn`) a form must also carry the session's CSRF token.
 */
export function consoleRoutes(options: ConsoleOptions): HttpRoute[] {
  const { engine } = options;
  const sessions = options.signIn === undefined ? undefined : new ConsoleSessions(options.signIn);
  const csrfOf = (request: Request): string | null => sessions?.sessionOf(request)?.csrf ?? null;
  // Refuses a form from another site: its Origin, and under a session a missing or wrong CSRF token.
  const forged = (request: Request, form: URLSearchParams): Response | undefined =>
    checkOrigin(request) ?? sessions?.refuseForgedForm(request, form);
  const operators = new Set(options.operators ?? []);
  const caller = (info: HttpRequestInfo): string => ownerOf({ http: { authInfo: info.authInfo } }, 'http');
  // Only an authenticated principal can be an operator: with no `authInfo` there is none to match.
  const isOperator = (info: HttpRequestInfo): boolean => {
    const principal = principalOf(info.authInfo);
    return principal !== undefined && operators.has(principal);
  };
  // The owner a task page or action reads with: the caller's own, or the `?owner=` an operator's link carries.
  const owner = (request: Request, info: HttpRequestInfo): string => {
    const named = new URL(request.url).searchParams.get('owner');
    return isOperator(info) && named !== null && named !== '' ? named : caller(info);
  };
  const tools = [...engine.tools.keys()].sort();

  const list = async (request: Request, info: HttpRequestInfo): Promise<Response> => {
    const operator = isOperator(info);
    const filters = readFilters(new URL(request.url).searchParams, tools, operator);
    const query = {
      limit: PAGE_SIZE,
      ...(filters.cursor === '' ? {} : { cursor: filters.cursor }),
      ...(filters.status.length === 0 ? {} : { status: filters.status as TaskStatus[] }),
      ...(filters.wire === '' ? {} : { wire: filters.wire as WireName }),
    };
    // Without a principal the caller's "own" tasks are everyone's anonymous tasks: a namespace it
    // must not hold, unless the console was started to list them.
    const unlisted = info.authInfo === undefined && options.listAnonymous !== true;
    const page = unlisted
      ? { tasks: [], nextCursor: null }
      : !operator
        ? await engine.list(caller(info), query)
        : filters.owner === ''
          ? await engine.listAllOwners(query)
          : await engine.list(filters.owner, query);
    // The store filters by status and wire; the tool filter applies to the page it returned.
    const tasks = filters.tool === '' ? page.tasks : page.tasks.filter((t) => t.tool === filters.tool);
    return htmlResponse(
      listPage({
        caller: caller(info),
        operator,
        tasks,
        tools,
        filters,
        nextCursor: page.nextCursor,
        unlisted: unlisted ? (options.listAnonymousSwitch ?? 'listAnonymous: true') : null,
        csrf: csrfOf(request),
      }),
    );
  };

  // The "open a task by its id" form of an unlisted caller: the id is its capability.
  const open = async (request: Request): Promise<Response> => {
    const id = (new URL(request.url).searchParams.get('id') ?? '').trim();
    const location = id === '' ? '/console' : `/console/tasks/${encodeURIComponent(id)}`;
    return new Response(null, { status: 303, headers: { location } });
  };

  const detail = async (request: Request, info: HttpRequestInfo): Promise<Response> => {
    const task = await find(request, info);
    if (task === null) return htmlResponse(errorPage(caller(info), 404, 'No such task.', csrfOf(request)), 404);
    const search = new URL(request.url).searchParams;
    const notice = search.get('notice');
    const timeline = timelineOf(task, options.timeline?.events(task.id) ?? []);
    const operator = isOperator(info);
    // `?log=tail`: the last lines, from where the log ends now (one short read finds it).
    const tail = search.get('log') === 'tail';
    // Read with the task's owner: the same store read, under the same ownership, as `get` (S8).
    const after = tail
      ? Math.max(0, (await engine.readLog(task.owner, task.id, { limit: 1 })).lastSeq - CONSOLE_LOG_LINES)
      : /^\d{1,15}$/.test(search.get('log_after') ?? '')
        ? Number(search.get('log_after'))
        : 0;
    const log = await engine.readLog(task.owner, task.id, { after, limit: CONSOLE_LOG_LINES });
    const q = ownerQuery(operator, task.owner);
    const base = `/console/tasks/${encodeURIComponent(task.id)}${q === '' ? '?' : `${q}&`}`;
    const links = { page: (n: number): string => `${base}log_after=${n}#log`, tail: `${base}log=tail#log` };
    return htmlResponse(
      detailPage({
        caller: caller(info),
        operator,
        task,
        timeline,
        log: logSection(log, after, links, tail),
        webhooks: webhookSection((await options.outbox?.readDeliveries(task.owner, task.id)) ?? []),
        ...(notice === null ? {} : { notice }),
        csrf: csrfOf(request),
      }),
    );
  };

  const cancel = async (request: Request, info: HttpRequestInfo): Promise<Response> => {
    const refused = forged(request, new URLSearchParams(info.body?.toString('utf8') ?? ''));
    if (refused !== undefined) return refused;
    const id = info.params['id'] ?? '';
    try {
      const outcome = await engine.cancel(owner(request, info), id);
      const notice =
        outcome.outcome === 'cancelled' ? 'Cancelled.' : `Not cancelled: the task was already ${outcome.task.status}.`;
      return seeOther(id, notice, ownerQuery(isOperator(info), outcome.task.owner));
    } catch (error) {
      if (isTerminusError(error, 'not_found'))
        return htmlResponse(errorPage(caller(info), 404, 'No such task.', csrfOf(request)), 404);
      throw error;
    }
  };

  const answer = async (request: Request, info: HttpRequestInfo): Promise<Response> => {
    const form = new URLSearchParams(info.body?.toString('utf8') ?? '');
    const refused = forged(request, form);
    if (refused !== undefined) return refused;
    const task = await find(request, info);
    if (task === null) return htmlResponse(errorPage(caller(info), 404, 'No such task.', csrfOf(request)), 404);
    const back = ownerQuery(isOperator(info), task.owner);
    const key = form.get('key') ?? '';
    const asked = task.inputRequests[key];
    if (asked === undefined || Object.hasOwn(task.inputResponses, key))
      return seeOther(task.id, 'That input request is not open.', back);
    const action = form.get('action') === 'decline' ? 'decline' : 'accept';
    const reply = action === 'accept' ? { action, content: contentOf(form, asked.params) } : { action };
    await engine.respond(task.owner, task.id, { [key]: reply });
    return seeOther(task.id, action === 'accept' ? 'Answer sent.' : 'Declined.', back);
  };

  const find = async (request: Request, info: HttpRequestInfo): Promise<TaskRecord | null> => {
    try {
      return await engine.get(owner(request, info), info.params['id'] ?? '');
    } catch (error) {
      if (isTerminusError(error, 'not_found')) return null;
      throw error;
    }
  };

  // `/console/` is the same page: a typed or pasted trailing slash keeps its query and lands on it.
  const slash = async (request: Request): Promise<Response> => {
    const { search } = new URL(request.url);
    return new Response(null, { status: 308, headers: { location: `/console${search}` } });
  };

  // Under sign-in, a browser's session cookie stands for its token, and one without credentials is
  // sent to the sign-in page.
  const signedIn = sessions === undefined ? {} : { session: sessions.principal, signIn: sessions.redirect };
  return [
    ...(sessions?.routes() ?? []),
    route('GET', '/console', list, signedIn),
    route('GET', '/console/', slash, signedIn),
    route('GET', '/console/open', open, signedIn),
    route('GET', '/console/tasks/:id', detail, signedIn),
    route('POST', '/console/tasks/:id/cancel', cancel, { body: 'form', ...signedIn }),
    route('POST', '/console/tasks/:id/answer', answer, { body: 'form', ...signedIn }),
  ];
}

function readFilters(params: URLSearchParams, tools: readonly string[], operator: boolean): ListFilters {
  const status = params.getAll('status').filter((s) => (TASK_STATUSES as readonly string[]).includes(s));
  const tool = params.get('tool') ?? '';
  const wire = params.get('wire') ?? '';
  return {
    status,
    tool: tools.includes(tool) ? tool : '',
    wire: (WIRES as readonly string[]).includes(wire) ? wire : '',
    owner: operator ? (params.get('owner') ?? '').trim() : '',
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

/** `ownerPart` is '' or `?owner=...` (an operator's); the notice joins it. */
function seeOther(id: string, notice: string, ownerPart = ''): Response {
  const query = ownerPart === '' ? '?' : `${ownerPart}&`;
  const location = `/console/tasks/${encodeURIComponent(id)}${query}notice=${encodeURIComponent(notice)}`;
  return new Response(null, { status: 303, headers: { location } });
}
