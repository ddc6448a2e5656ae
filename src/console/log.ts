/**
 * The task page's log section (issue 18): one page of the task's own log read from the engine
 * (`engine.readLog`, owned like `get`), as a table of escaped text (a log is untrusted: the `html`
 * template escapes every interpolation), with the lines the per-task bound dropped counted, a marker
 * where a re-run after a crash starts (the epoch changes), and a link to the next page by cursor.
 */
import type { TaskLogPage } from '../runner/engine-port.js';
import { html, type Html } from './html.js';

/** Lines on one console page: enough for a test run's tail, small enough for a browser (~100 KB). */
export const CONSOLE_LOG_LINES = 500;

const time = (at: number): string => new Date(at).toISOString().replace('T', ' ').slice(0, 23);

/**
 * `after`: the cursor this page starts from (the `log_after` query); `pageHref(n)` the link to the
 * page after seq `n` (it keeps the caller's other query parameters, such as an operator's `owner`).
 */
export function logSection(log: TaskLogPage, after: number, pageHref: (after: number) => string): Html {
  const rows: Html[] = [];
  let previous: { seq: number; epoch: number } | null = null;
  for (const line of log.lines) {
    const gap = line.seq - (previous?.seq ?? after) - 1;
    // Lines before the first kept one are counted in `dropped`; a gap later on is the same thing.
    if (gap > 0 && previous !== null) rows.push(marker(`${gap} line(s) dropped here`));
    if (previous !== null && line.epoch !== previous.epoch) rows.push(marker(`re-run, epoch ${line.epoch}`));
    rows.push(
      html`<tr data-seq="${line.seq}" data-epoch="${line.epoch}" class="${line.stream}">
        <td class="muted">${line.seq}</td>
        <td class="muted">${time(line.at)}</td>
        <td>${line.epoch}</td>
        <td><pre class="line">${line.text}</pre></td>
        <td>${line.fields === undefined ? '' : html`<code>${JSON.stringify(line.fields)}</code>`}</td>
      </tr>`,
    );
    previous = line;
  }
  const dropped =
    log.dropped > 0
      ? html`<p class="muted" data-field="log-dropped">
          ${log.dropped} oldest line(s) dropped by the server's per-task bound.
        </p>`
      : '';
  const more =
    log.lines.length >= CONSOLE_LOG_LINES
      ? html`<p><a href="${pageHref(log.next)}">newer lines (after ${log.next})</a></p>`
      : log.done
        ? html`<p class="muted">End of the log: the task ended.</p>`
        : html`<p class="muted">The task is still running: refresh for newer lines.</p>`;
  const start = after > 0 ? html`<p><a href="${pageHref(0)}">from the start</a></p>` : '';
  const table =
    log.lines.length === 0
      ? html`<p class="muted">${after > 0 ? `No lines after ${after}.` : 'No log lines.'}</p>`
      : html`<table class="log">
          <thead>
            <tr>
              <th>#</th>
              <th>time (UTC)</th>
              <th>epoch</th>
              <th>line</th>
              <th>fields</th>
            </tr>
          </thead>
          <tbody>
            ${rows}
          </tbody>
        </table>`;
  return html`<h2 id="log">Log</h2>
    <div class="card" data-field="log">${dropped}${start}${table}${more}</div>`;
}

function marker(text: string): Html {
  return html`<tr class="marker">
    <td colspan="5">-- ${text} --</td>
  </tr>`;
}
