/**
 * The task page's log section (issue 18): one page of the task's own log read from the engine
 * (`engine.readLog`, owned like `get`), as a table of escaped text (a log is untrusted: the `html`
 * template escapes every interpolation), with the lines the per-task bound dropped counted, a marker
 * where a re-run after a crash starts (the epoch changes), and a link to the next page by cursor.
 */
import type { TaskLogPage } from '../runner/engine-port.js';
import { html, dataTable, type Html } from './html.js';

/** Lines on one console page: enough for a test run's tail, small enough for a browser (~100 KB). */
export const CONSOLE_LOG_LINES = 500;

const time = (at: number): string => new Date(at).toISOString().replace('T', ' ').slice(0, 23);

/** Where the log section's links go. */
export interface LogLinks {
  /** The page after seq `n` (it keeps the caller's other query parameters, such as an operator's `owner`). */
  page(after: number): string;
  /** The tail: the last `CONSOLE_LOG_LINES` lines. */
  readonly tail: string;
}

/**
 * `after`: the cursor this page starts from (the `log_after` query); `tail`: the page is the log's
 * tail (`?log=tail`), read from `lastSeq - CONSOLE_LOG_LINES`. A log longer than a page links to its
 * tail, and the tail to the start and to the page before it: plain links, no script.
 */
export function logSection(log: TaskLogPage, after: number, links: LogLinks, tail = false): Html {
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
  const rest = log.lastSeq - log.next;
  const more =
    log.lines.length >= CONSOLE_LOG_LINES && rest > 0
      ? html`<p>
          <a href="${links.page(log.next)}">newer lines (after ${log.next})</a> ·
          <a href="${links.tail}" data-link="log-tail">the tail (last ${CONSOLE_LOG_LINES} lines of ${log.lastSeq})</a>
        </p>`
      : log.done
        ? html`<p class="muted">End of the log: the task ended.</p>`
        : html`<p class="muted">
            The task is still running: <a href="${tail ? links.tail : links.page(after)}">refresh</a> for newer lines.
          </p>`;
  const first = log.lines[0]?.seq ?? after + 1;
  const earlier =
    tail && first > 1 + log.dropped
      ? html` · <a href="${links.page(Math.max(0, first - 1 - CONSOLE_LOG_LINES))}">earlier lines</a>`
      : '';
  const start = after > 0 ? html`<p><a href="${links.page(0)}">from the start</a>${earlier}</p>` : '';
  const heading = tail
    ? html`<p class="muted" data-field="log-tail">The last lines of the log (${log.lastSeq} in all).</p>`
    : '';
  const table =
    log.lines.length === 0
      ? html`<p class="muted">${after > 0 ? `No lines after ${after}.` : 'No log lines.'}</p>`
      : dataTable('log lines', ['#', 'time (UTC)', 'epoch', 'line', 'fields'], rows, 'log');
  return html`<h2 id="log">Log</h2>
    <div class="card" data-field="log">${dropped}${heading}${start}${table}${more}</div>`;
}

function marker(text: string): Html {
  return html`<tr class="marker">
    <td colspan="5">-- ${text} --</td>
  </tr>`;
}
