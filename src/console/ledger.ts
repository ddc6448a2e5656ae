import type { Ledger } from '../executor/ledger-port.js';
import { LOCAL_STATES, type LocalState, type ToolOperation } from '../executor/operation.js';
import { route, type HttpRoute } from '../server/http/routes.js';
import { Html, escape, html, page, dataTable } from './html.js';

/** Operations listed per state page; the ledger returns the oldest update first. */
const PAGE_SIZE = 200;
/** States that need nobody: listed only on request. */
const SETTLED: readonly LocalState[] = ['ACCEPTED', 'CANCELLED_ACCEPTED', 'NEVER_CREATED', 'EXPIRED_WITH_RECEIPT'];

/** The header of the ledger's pages: they have no sign-in (loopback by default) and no actions. */
const VIEWER = { home: '/ui', brand: 'terminus ledger', unsigned: 'read-only, no sign-in' };

const time = (at: number | null | undefined): string =>
  at === null || at === undefined ? '' : new Date(at).toISOString().replace('T', ' ').slice(0, 19);

/**
 * The executor's ledger as pages (`terminus ops ui`): `GET /ui` counts operations by local state
 * and lists one state (default: every unsettled one, UNKNOWN first); `GET /ui/operations/:id` shows
 * an operation's record, its history of transitions, the evidence an operator reconciles an
 * UNKNOWN with, and its receipt. Read-only; server-rendered, no script.
 */
export function ledgerRoutes(options: { readonly ledger: Ledger; readonly caller?: string }): HttpRoute[] {
  const { ledger } = options;
  const caller = options.caller ?? null;

  const list = async (request: Request): Promise<Response> => {
    const asked = new URL(request.url).searchParams.get('state');
    const counts = await Promise.all(
      LOCAL_STATES.map(async (s) => [s, (await ledger.listByState([s], 100_000)).length] as const),
    );
    const state = LOCAL_STATES.find((s) => s === asked);
    const shown: readonly LocalState[] =
      state !== undefined
        ? [state]
        : ['UNKNOWN', ...LOCAL_STATES.filter((s) => s !== 'UNKNOWN' && !SETTLED.includes(s))];
    const operations = (await ledger.listByState(shown, PAGE_SIZE)).sort(
      (a, b) => Number(b.state === 'UNKNOWN') - Number(a.state === 'UNKNOWN'),
    );
    // A grid of counts that wraps to the width of the screen; a state name may break after an underscore.
    const summary = html`<ul class="states">
      ${counts.map(
        ([s, n]) =>
          html`<li>
            <a href="/ui?state=${s}" ${s === state ? html`aria-current="page"` : ''}>${breakable(s)}</a
            ><strong data-state="${s}">${n}</strong>
          </li>`,
      )}
    </ul>`;
    const rows = operations.map(
      (o) =>
        html`<tr data-operation="${o.id}">
          <td>
            <a href="/ui/operations/${encodeURIComponent(o.id)}"><code>${o.id}</code></a>
          </td>
          <td>${o.callNodeId}</td>
          <td>${o.tool.name}</td>
          <td>${o.server ?? ''}</td>
          <td><code>${o.taskId ?? ''}</code></td>
          <td>${o.wire.name}</td>
          <td>${o.state}</td>
          <td>${o.lastServerStatus ?? ''}</td>
          <td>${o.evidence.length}</td>
          <td>${time(o.updatedAt)}</td>
        </tr>`,
    );
    const title = state === undefined ? 'Unsettled operations' : `Operations in ${state}`;
    const table =
      rows.length === 0
        ? html`<p class="muted">None.</p>`
        : dataTable(
            'operations',
            [
              'operation',
              'call node',
              'tool',
              'server',
              'task',
              'wire',
              'state',
              'server status',
              'evidence',
              'updated (UTC)',
            ],
            rows,
          );
    return respond(
      page(
        'Ledger',
        caller,
        html`<h1>Ledger</h1>
          ${summary}
          <h2>${title}</h2>
          ${table}`,
        VIEWER,
      ),
    );
  };

  const detail = async (
    _request: Request,
    info: { readonly params: Readonly<Record<string, string>> },
  ): Promise<Response> => {
    const operation = await ledger.load(info.params['id'] ?? '');
    if (operation === null)
      return respond(
        page(
          '404',
          caller,
          html`<h1>404</h1>
            <p>No such operation.</p>`,
          VIEWER,
        ),
        404,
      );
    const receipt = await ledger.getReceipt(operation.callNodeId);
    return respond(page(`Operation ${operation.id}`, caller, operationView(operation, receipt), VIEWER));
  };

  return [route('GET', '/ui', list), route('GET', '/ui/operations/:id', detail)];
}

function operationView(o: ToolOperation, receipt: unknown): Html {
  const facts = html`<dl>
    <dt>state</dt>
    <dd data-field="state">${o.state}</dd>
    <dt>call node</dt>
    <dd>${o.callNodeId}</dd>
    <dt>tool</dt>
    <dd>${o.tool.name} (${o.tool.descriptorVersion})</dd>
    <dt>server</dt>
    <dd>${o.server ?? ''}</dd>
    <dt>wire</dt>
    <dd>${o.wire.name} ${o.wire.adapterVersion}</dd>
    <dt>task</dt>
    <dd><code>${o.taskId ?? 'none yet'}</code></dd>
    <dt>submission key</dt>
    <dd>
      <code>${o.submissionKey}</code
      >${o.priorSubmissionKeys.length === 0 ? '' : html` (before: <code>${o.priorSubmissionKeys.join(', ')}</code>)`}
    </dd>
    <dt>server status</dt>
    <dd>${o.lastServerStatus ?? ''}</dd>
    <dt>cancel generation</dt>
    <dd>${o.cancelGeneration} (acknowledged ${o.cancelAckedGeneration})</dd>
    <dt>executor epoch</dt>
    <dd>${o.executionEpoch}</dd>
    <dt>server epoch</dt>
    <dd>${o.serverEpoch ?? ''}</dd>
    <dt>created</dt>
    <dd>${time(o.createdAt)}</dd>
    <dt>updated</dt>
    <dd>${time(o.updatedAt)}</dd>
  </dl>`;
  const history =
    o.history.length === 0
      ? html`<p class="muted">No transition yet.</p>`
      : html`<ol class="timeline">
          ${o.history.map(
            (h) =>
              html`<li>
                <span class="muted">${time(h.at)}</span> ${h.from} → ${h.to} <span class="muted">(${h.event})</span>
              </li>`,
          )}
        </ol>`;
  const evidence =
    o.evidence.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<pre data-field="evidence">${JSON.stringify(o.evidence, null, 2)}</pre>`;
  const receiptView =
    receipt === null
      ? html`<p class="muted">No receipt yet.</p>`
      : html`<pre data-field="receipt">${JSON.stringify(receipt, null, 2)}</pre>`;
  return html`<p><a href="/ui">ledger</a></p>
    <h1>Operation <code>${o.id}</code></h1>
    <div class="card">${facts}</div>
    <h2>History</h2>
    <div class="card">${history}</div>
    <h2>Evidence</h2>
    ${evidence}
    <h2>Receipt</h2>
    ${receiptView}`;
}

/** A state's name with a line-break opportunity after each underscore (`<wbr>`; read as one word). */
function breakable(state: string): Html {
  return new Html(state.split('_').map(escape).join('_<wbr />'));
}

function respond(body: string, status = 200): Response {
  return new Response(body, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    },
  });
}
