/**
 * The task page's webhook section (issue 32): each outbox row of the task (the status event, the
 * endpoint, where its delivery stands) and every attempt (time, node, HTTP status or error,
 * duration), read with the task's owner like every other read of the page (S8). The secret is
 * never shown; URLs are escaped like any other value.
 */
import type { DeliveryRecord } from '../store/outbox-port.js';
import { html, type Html } from './html.js';

const time = (at: number | null): string =>
  at === null ? '-' : new Date(at).toISOString().replace('T', ' ').slice(0, 23);

export function webhookSection(rows: readonly DeliveryRecord[]): Html | '' {
  if (rows.length === 0) return '';
  return html`<h2 id="webhooks">Webhooks</h2>
    <div class="card">
      <table data-field="webhooks">
        <tr>
          <th>event</th>
          <th>status</th>
          <th>endpoint</th>
          <th>delivery</th>
          <th>attempts</th>
        </tr>
        ${rows.map(
          (row) =>
            html`<tr data-seq="${row.seq}" data-state="${row.state}">
              <td class="muted">#${row.seq}</td>
              <td>${row.status}</td>
              <td><code>${row.url}</code></td>
              <td>
                ${row.state === 'pending' ? html`pending, next ${time(row.nextAt)}` : html`${row.state} ${time(row.doneAt)}`}
              </td>
              <td>
                ${row.attemptLog.map(
                  (a) =>
                    html`<div class="muted">
                      ${time(a.at)} ${a.node}: ${a.statusCode === null ? 'no answer' : `HTTP ${a.statusCode}`}
                      ${a.error ?? ''} (${a.durationMs} ms)
                    </div>`,
                )}
              </td>
            </tr>`,
        )}
      </table>
    </div>`;
}
