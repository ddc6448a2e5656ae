/**
 * The console's and `terminus ops ui`'s pages fit a phone and a laptop in a real Chromium (the built
 * `terminus serve --console` and `terminus ops ui`): at 390 x 844 and 1280 x 800 no page scrolls
 * sideways (a wide table scrolls in its own box), the ledger's 14 state counts wrap, and the task
 * list's status filter shows every status at once (a user sees and reaches each one, no box to
 * scroll). Structure only: widths compared, never a time. Needs `npm run build` and Debian's
 * chromium at /usr/bin/chromium. `TERMINUS_SCREENSHOT_DIR=/tmp` keeps the screenshots.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { TASK_STATUSES } from '../../src/core/task.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { LOCAL_STATES, newOperation } from '../../src/executor/operation.js';
import { BUILT, assertBuilt, killAll, tempDir, track } from '../cli/helpers.js';
import { serveBuilt } from '../fixtures/built-serve.js';
import { CHROMIUM, launchChromium } from '../fixtures/chromium.js';

const SIZES = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'laptop', width: 1280, height: 800 },
] as const;
const dir = tempDir('terminus-console-layout-');
let browser: BrowserContext | undefined;

afterAll(async () => {
  await browser?.close();
  killAll();
  dir.remove();
});

/** A ledger with a few operations in SUBMITTING (unsettled, so listed; long ids, as the executor makes them). */
async function ledgerWithOperations(path: string): Promise<string> {
  const ledger = openSqliteLedger({ path });
  const epoch = await ledger.bumpEpoch();
  let first = '';
  for (const i of [0, 1, 2]) {
    const record = newOperation({
      id: `op_0f3c9a7e-5b1d-4c2a-9e8f-${String(i).padStart(12, '0')}`,
      callNodeId: `nightly-run-2026-12-06/step-${i}/build_report`,
      requestDigest: `sha256:${'ab'.repeat(32)}`,
      tool: { name: 'build_report', descriptorVersion: 'unversioned' },
      body: { title: 'quarterly', sections: 12 },
      wire: { name: 'mcp-tasks-ext', adapterVersion: '1' },
      submissionKey: `key_7d1e6b2a-${String(i).padStart(4, '0')}-4f0c-8a3b-5c9d2e1f0a7b`,
      executionEpoch: epoch,
      now: Date.UTC(2026, 11, 6, 9, 0, i),
      budgetMs: null,
    });
    await ledger.create({ ...record, server: 'http://127.0.0.1:3000/mcp' });
    if (first === '') first = record.id;
  }
  await ledger.close();
  return first;
}

async function opsUi(ledger: string): Promise<string> {
  const child = track(
    spawn(process.execPath, [BUILT, 'ops', 'ui', '--ledger', ledger, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  return new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /on (http:\/\/\S+)\/ui/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`ops ui exited ${code}`)));
  });
}

// Scripts run in the page (strings: the tests are type-checked without the DOM library).

/** How far the page reaches past the viewport's right edge (0: it fits, nothing scrolls sideways). */
const OVERFLOW = 'document.documentElement.scrollWidth - window.innerWidth';

/**
 * The statuses of the list's filter a user sees where they are: each control (a checkbox, or an
 * option of a list box) lies whole inside the viewport and inside the box that would clip it, and
 * it (or its label) is what is drawn at its centre.
 */
const VISIBLE_STATUSES = `(() => {
  const inside = (inner, outer) => inner.width > 0 && inner.height > 0 && inner.left >= outer.left &&
    inner.top >= outer.top && inner.right <= outer.right && inner.bottom <= outer.bottom;
  const viewport = { left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight };
  const controls = [...document.querySelectorAll(
    'form.filters input[name="status"], form.filters select[name="status"] option')];
  return controls.filter((control) => {
    const box = control.getBoundingClientRect();
    if (!inside(box, viewport)) return false;
    const clip = control instanceof HTMLOptionElement ? control.closest('select') : null;
    if (clip !== null && !inside(box, clip.getBoundingClientRect())) return false;
    const drawn = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return drawn !== null && (drawn === control || control.contains(drawn) || drawn.contains(control));
  }).map((control) => control.value);
})()`;

/** The statuses the filter has chosen (checked boxes or selected options). */
const CHOSEN_STATUSES = `[...document.querySelectorAll('[name="status"]:checked, [name="status"] :checked')].map((c) => c.value)`;

/** The ledger's state counts whose right edge is past the viewport's. */
const COUNTS_OUTSIDE = `[...document.querySelectorAll('[data-state]')]
  .filter((count) => count.getBoundingClientRect().right > window.innerWidth)
  .map((count) => count.getAttribute('data-state'))`;

const run = <T>(page: Page, script: string): Promise<T> => page.evaluate<T>(script);

describe('console and ops ui layout in Chromium', () => {
  it('fits 390 and 1280 px wide without sideways scroll; the counts wrap; every status of the filter shows', async () => {
    assertBuilt();
    expect(existsSync(CHROMIUM), 'apt-get install chromium (see .ci/run)').toBe(true);
    const operation = await ledgerWithOperations(join(dir.path, 'ledger.db'));
    const ui = await opsUi(join(dir.path, 'ledger.db'));
    const server = await serveBuilt(join(dir.path, 'tasks.db'), ['--console', '--console-list-anonymous']);
    const base = server.url.replace(/\/mcp$/, '');
    const created = await fetch(`${base}/v1/tools/run_tests:run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { count: 3, pauseMs: 10 } }),
    });
    expect(created.status).toBe(200);
    const task = ((await created.json()) as { name: string }).name.replace('operations/', '');

    const launched = await launchChromium(dir.path, { width: 390, height: 844 });
    browser = launched.browser;
    const page = launched.page;
    const pages = {
      'console-list': `${base}/console?status=working&status=completed`,
      'console-task': `${base}/console/tasks/${task}`,
      'ops-ui': `${ui}/ui`,
      'ops-ui-operation': `${ui}/ui/operations/${operation}`,
    };
    const wide: Record<string, number> = {};
    for (const size of SIZES) {
      await page.setViewportSize({ width: size.width, height: size.height });
      for (const [name, url] of Object.entries(pages)) {
        await page.goto(url);
        if (name === 'console-list') await page.locator(`tr[data-task="${task}"]`).waitFor();
        wide[`${name} at ${size.width}`] = await run<number>(page, OVERFLOW);
        const shots = process.env['TERMINUS_SCREENSHOT_DIR'];
        if (shots !== undefined)
          await page.screenshot({ path: join(shots, `console41-${name}-${size.width}.png`), fullPage: true });
      }
      // Every status of the list's filter is on screen at once, and the ones the URL asked for are checked.
      await page.goto(pages['console-list']);
      expect
        .soft(await run<string[]>(page, VISIBLE_STATUSES), `status filter at ${size.width}`)
        .toEqual([...TASK_STATUSES]);
      const chosen = await run<string[]>(page, CHOSEN_STATUSES);
      expect.soft(chosen).toEqual(['working', 'completed']);
      // Every state count of the ledger is inside the viewport's width (the row wraps).
      await page.goto(pages['ops-ui']);
      const outside = await run<string[]>(page, COUNTS_OUTSIDE);
      expect.soft(outside, `state counts past the right edge at ${size.width}`).toEqual([]);
      expect(await page.locator('[data-state]').count()).toBe(LOCAL_STATES.length);
    }
    expect(wide).toEqual(Object.fromEntries(Object.keys(wide).map((k) => [k, 0])));
    await server.stop();
  }, 120_000);
});
