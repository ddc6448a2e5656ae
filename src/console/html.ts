import { ANONYMOUS_OWNER } from '../server/owner.js';

/** HTML text with its special characters escaped. */
export function escape(value: unknown): string {
  return String(value)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** A tagged template whose interpolations are escaped unless they are `Html` already. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** Markup that is safe to insert as it is. */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escape(value);
}

// Inline: the console is served with no CDN and no static files (one response per page).
const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:10px 20px;display:flex;flex-wrap:wrap;gap:4px 20px;align-items:baseline}
header a{color:#fff;text-decoration:none;font-weight:600}
header small{color:#b9c0cf}
header form.sign-out{margin-left:auto}header form.sign-out button{padding:2px 10px;background:none;border-color:#b9c0cf}
main{padding:16px 20px;max-width:1200px}
h1{overflow-wrap:anywhere}
.wide{overflow-x:auto;margin-bottom:12px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e3e6eb;vertical-align:top}
th{background:#eef0f4;font-weight:600}
code,pre{font:12px/1.4 ui-monospace,monospace}
pre{background:#fff;border:1px solid #e3e6eb;padding:8px;overflow:auto;max-height:360px}
.status{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600}
.working{background:#dbeafe;color:#1e40af}.input_required{background:#fef3c7;color:#92400e}
.completed{background:#dcfce7;color:#166534}.failed{background:#fee2e2;color:#991b1b}
.cancelled{background:#e5e7eb;color:#374151}
form.filters{display:flex;gap:10px;align-items:end;margin-bottom:12px;flex-wrap:wrap}
label,legend{display:flex;flex-direction:column;font-size:12px;color:#4b5563;gap:2px}
fieldset.choices{border:0;margin:0;padding:0;min-width:0}fieldset.choices legend{padding:0;margin-bottom:2px}
fieldset.choices div{display:flex;flex-wrap:wrap;gap:2px 12px}
span.presets{display:flex;gap:10px;padding-bottom:4px}label.choice{flex-direction:row;align-items:center;gap:4px;font-size:14px;color:inherit}
ul.states{list-style:none;margin:0 0 12px;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(12em,1fr));gap:1px;background:#e3e6eb;border:1px solid #e3e6eb}
ul.states li{background:#fff;padding:6px 8px;display:flex;justify-content:space-between;align-items:baseline;gap:8px;overflow-wrap:anywhere}
ul.states li:has([aria-current]){background:#eef0f4}ul.states [aria-current]{font-weight:600}
button{padding:5px 12px;border:1px solid #1d2330;background:#1d2330;color:#fff;border-radius:4px;cursor:pointer}
button.danger{background:#b91c1c;border-color:#b91c1c}
.card{background:#fff;border:1px solid #e3e6eb;padding:12px 14px;margin-bottom:14px}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:4px 16px;margin:0}
dt{color:#4b5563}dd{margin:0;overflow-wrap:anywhere}
ol.timeline{margin:0;padding-left:18px}ol.timeline li{margin:3px 0}
.muted{color:#6b7280}
pre.line{border:0;padding:0;margin:0;max-height:none;background:none;white-space:pre-wrap}tr.output pre.line{color:#1e40af}tr.marker td{color:#92400e}
`;

/**
 * A table of `rows` under `headers` (a `false` header is left out), in its own box that scrolls
 * sideways when the screen is narrower than the table, so the page itself never does; the box is
 * focusable and named by `label`, so a keyboard can scroll it and a screen reader announces it.
 */
export function dataTable(
  label: string,
  headers: readonly (string | false)[],
  rows: readonly Html[],
  className?: string,
): Html {
  const head = headers.filter((h) => h !== false).map((h) => html`<th>${h}</th>`);
  const classAttr = className === undefined ? '' : new Html(` class="${escape(className)}"`);
  return html`<div class="wide" role="region" aria-label="${label}" tabindex="0">
    <table${classAttr}>
      <thead>
        <tr>
          ${head}
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
  </div>`;
}

/** Who a page is for: the caller it was made for (null: not signed in), and its session's CSRF token. */
export interface PageViewer {
  readonly home?: string;
  /** Set when the page was made for a signed-in browser session: the header gets a sign-out form. */
  readonly csrf?: string | null;
  /** The name in the header (default `terminus console`). */
  readonly brand?: string;
  /** Said in the header instead of "not signed in", for pages that have no sign-in at all. */
  readonly unsigned?: string;
}

/**
 * The page frame: title, navigation and the caller the page was made for (null or the anonymous
 * owner: nobody signed in).
 */
export function page(title: string, caller: string | null, body: Html, viewer: PageViewer | string = {}): string {
  const {
    home = '/console',
    csrf = null,
    brand = 'terminus console',
    unsigned = 'not signed in',
  } = typeof viewer === 'string' ? { home: viewer } : viewer;
  const who =
    caller === null || caller === ANONYMOUS_OWNER
      ? html`<small>${unsigned}</small>`
      : html`<small>signed in as <code>${caller}</code></small
          >${
            csrf === null
              ? ''
              : html`<form method="post" action="/console/sign-out" class="sign-out">
                  <input type="hidden" name="csrf" value="${csrf}" /><button type="submit">Sign out</button>
                </form>`
          }`;
  return `<!doctype html>${
    html`<html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>${title} · ${brand}</title>
        <style>
          ${new Html(STYLE)}
        </style>
      </head>
      <body>
        <header><a href="${home}">${brand}</a>${who}</header>
        <main>${body}</main>
      </body>
    </html>`.text
  }`;
}
