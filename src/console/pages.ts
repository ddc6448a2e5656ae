import type { TaskRecord } from '../core/task.js';
import { TASK_STATUSES, WIRES } from '../core/task.js';
import { html, page, dataTable, type Html } from './html.js';
import type { TimelineEntry } from './timeline.js';

/** The list filters, as read from the query string. */
export interface ListFilters {
  readonly status: readonly string[];
  readonly tool: string;
  readonly wire: string;
  /** An operator's owner filter (`auth:bob`); '' is every owner. Ignored for other callers. */
  readonly owner: string;
  readonly cursor: string;
}

/** The query string that names a task's owner on an operator's links and forms ('' for anyone else). */
export function ownerQuery(operator: boolean, owner: string): string {
  return operator ? `?${new URLSearchParams({ owner }).toString()}` : '';
}

const time = (at: number | null): string =>
  at === null ? '' : new Date(at).toISOString().replace('T', ' ').slice(0, 19);

const badge = (status: string): Html => html`<span class="status ${status}">${status.replace('_', ' ')}</span>`;

/**
 * `/console`: the caller's tasks, newest first, with filters (a plain GET form: no JavaScript needed).
 * An operator's page lists every owner's, with an owner column and filter.
 */
export function listPage(options: {
  readonly caller: string;
  readonly operator: boolean;
  readonly tasks: readonly TaskRecord[];
  readonly tools: readonly string[];
  readonly filters: ListFilters;
  readonly nextCursor: string | null;
  /**
   * An anonymous caller whose tasks are not listed (it opens one by its id instead): the switch that
   * would list them, named on the page; null when the list is shown.
   */
  readonly unlisted: string | null;
  /** The CSRF token of the browser session the page is for (its sign-out form), if any. */
  readonly csrf?: string | null;
}): string {
  const { filters } = options;
  const option = (value: string, selected: boolean, label = value): Html =>
    html`<option value="${value}" ${selected ? html` selected` : ''}>${label}</option>`;
  const form = html`<form class="filters" method="get" action="/console">
    <fieldset class="choices">
      <legend>status</legend>
      <div>
        ${TASK_STATUSES.map(
          (s) =>
            html`<label class="choice"
              ><input
                type="checkbox"
                name="status"
                value="${s}"
                ${filters.status.includes(s) ? html` checked` : ''}
              />${s.replace('_', ' ')}</label
            >`,
        )}
      </div>
    </fieldset>
    <label
      >tool<select name="tool">
        ${option('', filters.tool === '', 'any')}${options.tools.map((t) => option(t, filters.tool === t))}
      </select></label
    >
    <label
      >wire<select name="wire">
        ${option('', filters.wire === '', 'any')}${WIRES.map((w) => option(w, filters.wire === w))}
      </select></label
    >
    ${
      options.operator
        ? html`<label>owner<input type="text" name="owner" value="${filters.owner}" placeholder="any" /></label>`
        : ''
    }
    <button type="submit">Filter</button>
    <span class="presets"
      ><a href="/console?status=working&amp;status=input_required">in flight</a>
      <a href="/console?status=completed&amp;status=failed&amp;status=cancelled">finished</a>
      <a href="/console">all</a></span
    >
  </form>`;
  const rows = options.tasks.map(
    (t) =>
      html`<tr data-task="${t.id}">
        <td>
          <a href="/console/tasks/${encodeURIComponent(t.id)}${ownerQuery(options.operator, t.owner)}"
            ><code>${t.id}</code></a
          >
        </td>
        ${options.operator ? html`<td data-owner="${t.owner}"><code>${t.owner}</code></td>` : ''}
        <td>${t.tool}</td>
        <td>${t.wire}</td>
        <td>${badge(t.status)}</td>
        <td>${t.epoch}</td>
        <td>
          ${t.progress === null ? '' : `${t.progress.done}${t.progress.total === undefined ? '' : ` / ${t.progress.total}`}`}
        </td>
        <td>${time(t.createdAt)}</td>
        <td>${time(t.updatedAt)}</td>
      </tr>`,
  );
  const more =
    options.nextCursor === null
      ? ''
      : html`<p><a href="/console?${query({ ...filters, cursor: options.nextCursor })}">older tasks</a></p>`;
  const table =
    options.unlisted !== null
      ? html`<p class="muted" data-unlisted>
            Not signed in: anonymous tasks are not listed (whoever holds a task's id reaches it, and only that one).
            Open a task by its id, or start the server with credentials (<code>--auth-tokens</code>,
            <code>--auth-jwks</code>). On a machine only you use, <code>${options.unlisted}</code> lists them.
          </p>
          <form method="get" action="/console/open">
            <label>task id <input type="text" name="id" size="30" /></label>
            <button type="submit">Open</button>
          </form>`
      : rows.length === 0
        ? html`<p class="muted">No task matches.</p>`
        : dataTable(
            'tasks',
            [
              'task',
              options.operator && 'owner',
              'tool',
              'wire',
              'status',
              'epoch',
              'progress',
              'created (UTC)',
              'updated (UTC)',
            ],
            rows,
          );
  return page(
    'Tasks',
    options.caller,
    html`<h1>Tasks</h1>
      ${form}${table}${more}`,
    { csrf: options.csrf ?? null },
  );
}

function query(filters: ListFilters): string {
  const params = new URLSearchParams();
  for (const s of filters.status) params.append('status', s);
  if (filters.tool !== '') params.set('tool', filters.tool);
  if (filters.wire !== '') params.set('wire', filters.wire);
  if (filters.owner !== '') params.set('owner', filters.owner);
  if (filters.cursor !== '') params.set('cursor', filters.cursor);
  return params.toString();
}

/** `/console/tasks/:id`: the record, its timeline, its result or error, its log, and the actions it allows. */
export function detailPage(options: {
  readonly caller: string;
  readonly operator: boolean;
  readonly task: TaskRecord;
  readonly timeline: readonly TimelineEntry[];
  /** The task's own log section (`log.ts`), when the caller read one. */
  readonly log?: Html;
  /** The task's webhook deliveries (`webhooks.ts`), when it has any. */
  readonly webhooks?: Html | '';
  readonly notice?: string;
  /** The CSRF token of the browser session the page is for: every form carries it. */
  readonly csrf?: string | null;
}): string {
  const { task } = options;
  const csrf = options.csrf ?? null;
  const token = csrf === null ? '' : html`<input type="hidden" name="csrf" value="${csrf}" />`;
  const path = `/console/tasks/${encodeURIComponent(task.id)}`;
  const q = ownerQuery(options.operator, task.owner);
  const open = task.status === 'working' || task.status === 'input_required';
  const facts = html`<dl>
    <dt>status</dt>
    <dd>${badge(task.status)} ${task.statusMessage ?? ''}</dd>
    <dt>tool</dt>
    <dd>${task.tool}</dd>
    <dt>wire</dt>
    <dd>${task.wire}</dd>
    <dt>owner</dt>
    <dd><code>${task.owner}</code></dd>
    <dt>epoch</dt>
    <dd data-field="epoch">${task.epoch}</dd>
    <dt>lease</dt>
    <dd>
      ${task.leaseOwner === null ? 'none' : html`<code>${task.leaseOwner}</code> until ${time(task.leaseExpiresAt)}`}
    </dd>
    <dt>created</dt>
    <dd>${time(task.createdAt)}</dd>
    <dt>updated</dt>
    <dd>${time(task.updatedAt)}</dd>
    <dt>cancel requested</dt>
    <dd>${task.cancelRequested ? 'yes' : 'no'}</dd>
  </dl>`;
  const timeline = html`<ol class="timeline">
    ${options.timeline.map(
      (e) => html`<li>${e.at === null ? '' : html`<span class="muted">${time(e.at)}</span> `}${e.text}</li>`,
    )}
  </ol>`;
  const outcome =
    task.result !== null
      ? html`<h2>Result</h2>
          <pre data-field="result">${JSON.stringify(task.result, null, 2)}</pre>`
      : task.error !== null
        ? html`<h2>Error</h2>
            <pre data-field="error">${JSON.stringify(task.error, null, 2)}</pre>`
        : '';
  const inputs = Object.entries(task.inputRequests)
    .filter(([key]) => !Object.hasOwn(task.inputResponses, key))
    .map(([key, request]) => answerForm(path, q, key, request.params, token));
  const cancel = open
    ? html`<form method="post" action="${path}/cancel${q}">
        ${token}<button class="danger" type="submit">Cancel task</button>
      </form>`
    : '';
  const notice = options.notice === undefined ? '' : html`<p class="card"><strong>${options.notice}</strong></p>`;
  return page(
    `Task ${task.id}`,
    options.caller,
    html`<p><a href="/console">all tasks</a></p>
      <h1>Task <code>${task.id}</code></h1>
      ${notice}
      <div class="card">${facts}</div>
      <h2>Timeline</h2>
      <div class="card">${timeline}</div>
      ${inputs}${cancel}${outcome}${options.log ?? ''}${options.webhooks ?? ''}
      <p class="muted"><a href="${path}${q}">refresh</a></p>`,
    { csrf },
  );
}

/** A form for one outstanding elicitation: an input per flat property of its schema. */
function answerForm(path: string, q: string, key: string, params: Record<string, unknown>, token: Html | ''): Html {
  const message = typeof params['message'] === 'string' ? params['message'] : '';
  const schema = params['requestedSchema'] as
    { properties?: Record<string, { type?: string; description?: string }> } | undefined;
  const fields = Object.entries(schema?.properties ?? {}).map(([name, property]) => {
    const label = property.description ?? name;
    if (property.type === 'boolean') {
      return html`<label
        ><span><input type="checkbox" name="field.${name}" value="true" /> ${label}</span></label
      >`;
    }
    const type = property.type === 'number' || property.type === 'integer' ? 'number' : 'text';
    return html`<label
      >${label}<input type="${type}" name="field.${name}" data-type="${property.type ?? 'string'}"
    /></label>`;
  });
  return html`<div class="card">
    <h2>Input requested</h2>
    <p>${message}</p>
    <form method="post" action="${path}/answer${q}">
      <input type="hidden" name="key" value="${key}" />
      ${token}${fields}
      <p>
        <button type="submit" name="action" value="accept">Answer</button>
        <button type="submit" name="action" value="decline">Decline</button>
      </p>
    </form>
  </div>`;
}

/** A short page for an error (not found, refused). */
export function errorPage(caller: string, status: number, message: string, csrf: string | null = null): string {
  return page(
    `${status}`,
    caller,
    html`<h1>${status}</h1>
      <p>${message}</p>
      <p><a href="/console">all tasks</a></p>`,
    { csrf },
  );
}
