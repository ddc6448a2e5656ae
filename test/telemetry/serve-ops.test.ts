/**
 * Issue 16's done-when test: the built `terminus serve` runs a task through a kill -9 and a
 * restart, and the lifecycle lines, the metrics (each counter moved by exactly what happened on
 * that process), `/readyz` and the console in a real headless Chromium all show it.
 * Needs `npm run build` (dist/) and Debian's chromium at /usr/bin/chromium (.ci/run installs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium } from '../fixtures/chromium.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli/main.js');

interface Node {
  readonly url: string;
  readonly child: ChildProcess;
  /** Every JSON log line so far. */
  readonly lines: Record<string, unknown>[];
  waitForLine(match: (line: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>>;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];
let browser: BrowserContext | undefined;

afterEach(async () => {
  await browser?.close();
  browser = undefined;
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** `terminus serve` from dist/, configured partly by flags and partly by TERMINUS_* variables (item 6). */
async function serve(db: string, nodeId: string): Promise<Node> {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--port', '0', '--db', db, '--node-id', nodeId, '--console', '--console-list-anonymous'],
    {
      env: { ...process.env, TERMINUS_LOG_FORMAT: 'json', TERMINUS_LEASE_MS: '1000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] =
    [];
  let partial = '';
  child.stderr.on('data', (data: Buffer) => {
    partial += data.toString();
    const complete = partial.split('\n');
    partial = complete.pop() ?? '';
    for (const text of complete) {
      const line = JSON.parse(text) as Record<string, unknown>; // every stderr line is JSON with --log-format json
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.match(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /listening on (http:\/\/\S+)\/mcp/.exec(out);
      if (match) resolveUrl(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`terminus serve exited ${code}`)));
  });
  return {
    url,
    child,
    lines,
    waitForLine: (match, what) => {
      const found = lines.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolveLine, reject) => {
        const timer = setTimeout(() => reject(new Error(`no log line: ${what}; saw ${JSON.stringify(lines)}`)), 20_000);
        waiters.push({ match, resolve: (l) => (clearTimeout(timer), resolveLine(l)) });
      });
    },
  };
}

/** The value of one sample of `/metrics`, 0 when absent. */
async function metric(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const got = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(match[3]);
  }
  return 0;
}

const isEvent =
  (event: string, taskId: string, extra: Record<string, unknown> = {}) =>
  (line: Record<string, unknown>) =>
    line['event'] === event && line['taskId'] === taskId && Object.entries(extra).every(([k, v]) => line[k] === v);

describe('terminus serve: operations (issue 16)', () => {
  it('shows a task through kill -9 and restart in logs, metrics, /readyz and the console, and cancels it from the page', async () => {
    expect(existsSync(CLI), 'run `npm run build` first').toBe(true);
    expect(existsSync(CHROMIUM), 'apt-get install chromium (see .ci/run)').toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'terminus-ops-'));
    dirs.push(dir);
    const db = join(dir, 'tasks.db');

    // Node A: a `migrate` task (it asks for confirmation, then waits) created over AIP-151.
    const a = await serve(db, 'node-a');
    const created = await fetch(`${a.url}/v1/tools/migrate:run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { table: 'orders', rows: 1000 } }),
    });
    expect(created.status).toBe(200);
    const taskId = ((await created.json()) as { name: string }).name.replace('operations/', '');
    await a.waitForLine(isEvent('input_requested', taskId, { epoch: 1 }), 'input requested at epoch 1');
    expect(a.lines.find(isEvent('created', taskId))).toMatchObject({
      level: 'info',
      msg: 'task created',
      tool: 'migrate',
      wire: 'aip-151',
      owner: 'anonymous',
    });
    expect(a.lines.find(isEvent('created', taskId))).not.toHaveProperty('args'); // no --log-payloads
    expect(a.lines.find(isEvent('claimed', taskId))).toMatchObject({ msg: 'task claimed', node: 'node-a', epoch: 1 });
    const readyA = await fetch(`${a.url}/readyz`);
    expect(readyA.status).toBe(200);
    expect(await readyA.json()).toMatchObject({ ready: true, checks: { store: { ok: true }, runner: { ok: true } } });
    expect(await (await fetch(`${a.url}/healthz`)).json()).toEqual({ status: 'alive' });
    expect(await metric(a.url, 'terminus_tasks_created_total', { tool: 'migrate', wire: 'aip-151' })).toBe(1);
    expect(await metric(a.url, 'terminus_task_claims_total', { tool: 'migrate' })).toBe(1);
    expect(await metric(a.url, 'terminus_task_input_requests_total', { tool: 'migrate' })).toBe(1);
    expect(await metric(a.url, 'terminus_tasks_running', { tool: 'migrate' })).toBe(1);
    expect(
      await metric(a.url, 'terminus_http_requests_total', { method: 'POST /v1/tools', wire: 'aip-151', code: '200' }),
    ).toBe(1);

    // kill -9: no release, no last write; node B takes the task over once the 1 s lease runs out.
    a.child.kill('SIGKILL');
    await new Promise((r) => a.child.once('exit', r));
    const b = await serve(db, 'node-b');
    const reclaimed = await b.waitForLine(isEvent('claimed', taskId), 're-claim on node B');
    expect(reclaimed).toMatchObject({
      msg: 'task re-claimed after a lease expired',
      node: 'node-b',
      epoch: 2,
      previousEpoch: 1,
      previousNode: 'node-a',
    });
    // The re-run asks the same question again; the stored request (and any answer) is reused.
    await b.waitForLine(isEvent('input_requested', taskId, { epoch: 2 }), 'input requested at epoch 2');
    expect((await fetch(`${b.url}/readyz`)).status).toBe(200);
    expect(await metric(b.url, 'terminus_tasks_created_total', { tool: 'migrate' })).toBe(0);
    expect(await metric(b.url, 'terminus_task_claims_total', { tool: 'migrate' })).toBe(1);
    expect(await metric(b.url, 'terminus_task_reclaims_total', { tool: 'migrate' })).toBe(1);
    expect(await metric(b.url, 'terminus_task_lease_expiries_total', { tool: 'migrate' })).toBe(1);
    expect(await metric(b.url, 'terminus_task_queue_wait_seconds_count', { tool: 'migrate' })).toBe(0);

    // The console in a real Chromium: list, detail with both epochs, cancel.
    const launched = await launchChromium(dir, { width: 1200, height: 860 });
    browser = launched.browser;
    const page = launched.page;
    await page.goto(`${b.url}/console`);
    const row = page.locator(`tr[data-task="${taskId}"]`);
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.innerText()).toContain('migrate');
    expect(await row.innerText()).toContain('input required');
    await row.getByRole('link').click();
    await page.waitForURL(`**/console/tasks/${taskId}`);
    expect(await page.locator('[data-field="epoch"]').innerText()).toBe('2');
    const timeline = await page.locator('ol.timeline').innerText();
    expect(timeline).toContain('created on wire aip-151 for tool migrate');
    expect(timeline).toContain('epoch 1: ran and ended without an outcome');
    expect(timeline).toContain("epoch 2: re-claimed on node node-b after node node-a's lease (epoch 1) expired");
    expect(await page.locator('form[action$="/answer"]').count()).toBe(1);
    await page.screenshot({ path: process.env['TERMINUS_SCREENSHOT'] ?? join(dir, 'console.png'), fullPage: true });

    await page.getByRole('button', { name: 'Cancel task' }).click();
    await page.waitForURL(/notice=/);
    expect(await page.locator('.card strong').innerText()).toBe('Cancelled.');
    expect(await page.locator('.status').first().innerText()).toBe('cancelled');
    expect(await page.locator('ol.timeline').innerText()).toContain('cancel requested: won');

    // The API agrees, and B logged and counted the cancel exactly once.
    const operation = (await (await fetch(`${b.url}/v1/operations/${taskId}`)).json()) as {
      done: boolean;
      metadata: { status: string };
    };
    expect(operation).toMatchObject({ done: true, metadata: { status: 'cancelled' } });
    await b.waitForLine(
      isEvent('run_ended', taskId, { outcome: 'cancelled', epoch: 2 }),
      'the run stopped by the cancel',
    );
    expect(b.lines.filter(isEvent('cancel_requested', taskId))).toEqual([
      expect.objectContaining({ msg: 'task cancel requested: won', outcome: 'won', status: 'cancelled' }),
    ]);
    expect(await metric(b.url, 'terminus_task_cancels_total', { tool: 'migrate', outcome: 'won' })).toBe(1);
    expect(await metric(b.url, 'terminus_task_outcomes_total', { tool: 'migrate', status: 'cancelled' })).toBe(1);
    expect(await metric(b.url, 'terminus_task_runs_total', { tool: 'migrate', outcome: 'cancelled' })).toBe(1);
    expect(await metric(b.url, 'terminus_tasks_running', { tool: 'migrate' })).toBe(0);
    expect(
      await metric(b.url, 'terminus_http_requests_total', { method: 'POST /console', wire: 'http', code: '303' }),
    ).toBe(1);

    const exited = new Promise((r) => b.child.once('exit', r));
    b.child.kill('SIGTERM');
    await exited;
  }, 90_000);
});
