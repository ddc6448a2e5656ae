/**
 * The console's task log in a real Chromium (issue 18), against the built `terminus serve
 * --console`: a `run_tests` task that went through a kill -9 and a restart shows, on its page, its
 * lines in order, where the re-run starts (`-- re-run, epoch 2 --`), and the end of the log.
 * Needs `npm run build` (dist/) and Debian's chromium at /usr/bin/chromium (.ci/run installs it).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { assertBuilt, killAll, tempDir } from '../cli/helpers.js';
import { serveBuilt } from '../fixtures/built-serve.js';
import { CHROMIUM, launchChromium } from '../fixtures/chromium.js';

const dir = tempDir('terminus-console-log-');
let browser: BrowserContext | undefined;

afterAll(async () => {
  await browser?.close();
  killAll();
  dir.remove();
});

async function operation(url: string, id: string): Promise<{ done: boolean }> {
  return (await (await fetch(`${url}/v1/operations/${id}`)).json()) as { done: boolean };
}

describe('console: the task log in Chromium', () => {
  it('shows the lines of both runs, the re-run marked, and the end of the log', async () => {
    assertBuilt();
    expect(existsSync(CHROMIUM), 'apt-get install chromium (see .ci/run)').toBe(true);
    const db = join(dir.path, 'tasks.db');
    let server = await serveBuilt(db, ['--console', '--lease-ms', '1000']);
    const created = await fetch(`${server.url.replace(/\/mcp$/, '')}/v1/tools/run_tests:run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { count: 10, failEvery: 4, pauseMs: 300 } }),
    });
    expect(created.status).toBe(200);
    const taskId = ((await created.json()) as { name: string }).name.replace('operations/', '');
    const base = server.url.replace(/\/mcp$/, '');
    for (let i = 0; i < 100; i++) {
      const page = (await (await fetch(`${base}/v1/operations/${taskId}/logs`)).json()) as { next: number };
      if (page.next >= 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await server.kill9();
    server = await server.again();
    for (let i = 0; i < 300 && !(await operation(base, taskId)).done; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await operation(base, taskId)).done).toBe(true);

    const launched = await launchChromium(dir.path, { width: 1200, height: 900 });
    browser = launched.browser;
    const page = launched.page;
    await page.goto(`${base}/console/tasks/${taskId}`);
    const rows = page.locator('table.log tr[data-seq]');
    const seqs: number[] = await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-seq'))));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    const epochs: number[] = await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-epoch'))));
    expect([...new Set(epochs)]).toEqual([1, 2]);
    const log = await page.locator('[data-field="log"]').innerText();
    expect(log).toContain('running 10 tests');
    expect(log).toContain('-- re-run, epoch 2 --');
    expect(log).toMatch(/resuming at test_\d{3} \(attempt 2\)/);
    expect(log).toContain('FAIL test_008: expected 3, got 4');
    expect(log).toContain('10 tests: 8 passed, 2 failed');
    expect(log).toContain('End of the log: the task ended.');
    // The marker row sits between the last line of epoch 1 and the first of epoch 2.
    const order = await page
      .locator('table.log tbody tr')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-epoch') ?? tr.textContent!.trim()));
    const mark = order.indexOf('-- re-run, epoch 2 --');
    expect(order[mark - 1]).toBe('1');
    expect(order[mark + 1]).toBe('2');
    await page.screenshot({
      path: process.env['TERMINUS_SCREENSHOT'] ?? join(dir.path, 'task-log.png'),
      fullPage: true,
    });
    await server.stop();
  }, 120_000);
});
