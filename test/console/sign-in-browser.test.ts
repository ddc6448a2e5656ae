/**
 * Signing in to the console in a real Chromium, against the built `terminus serve --console
 * --auth-tokens` (two of them): a browser without credentials is sent to the sign-in page; the token
 * form opens a session cookie (HttpOnly, SameSite=Strict, Path=/console, one per server, a bounded
 * lifetime) whose principal is the token's, so the list shows that caller's tasks only (S8); a
 * cancel goes through with the session's CSRF token and is refused without it or with a forged one;
 * another server's cookie is refused; signing out ends the session for good. The bearer header keeps
 * working for scripts. Needs `npm run build` and Debian's chromium at /usr/bin/chromium.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { assertBuilt, killAll, tempDir } from '../cli/helpers.js';
import { serveBuilt, type BuiltServe } from '../fixtures/built-serve.js';
import { CHROMIUM, launchChromium } from '../fixtures/chromium.js';

const ALICE = 'alice-console-token-0123456789';
const BOB = 'bob-console-token-0123456789ab';
const dir = tempDir('terminus-console-sign-in-');
let browser: BrowserContext | undefined;
const servers: BuiltServe[] = [];

afterAll(async () => {
  await browser?.close();
  for (const s of servers) await s.stop();
  killAll();
  dir.remove();
});

const base = (server: BuiltServe): string => server.url.replace(/\/mcp$/, '');

/** A long `build_report` task of `token`'s caller, created over AIP-151 with the bearer header. */
async function task(server: BuiltServe, token: string, title: string): Promise<string> {
  const created = await fetch(`${base(server)}/v1/tools/build_report:run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ arguments: { title, sections: 300, sectionSeconds: 1 } }),
  });
  expect(created.status).toBe(200);
  return ((await created.json()) as { name: string }).name.replace('operations/', '');
}

async function status(server: BuiltServe, token: string, id: string): Promise<string> {
  const answer = await fetch(`${base(server)}/v1/operations/${id}`, { headers: { authorization: `Bearer ${token}` } });
  const op = (await answer.json()) as { done?: boolean; error?: { code: number } };
  return op.done !== true ? 'working' : op.error?.code === 1 ? 'cancelled' : 'done';
}

/**
 * Clicks the task page's cancel button after `tamper` (a script run in the page) changed its form,
 * as a forged or stale form would be: the answer's status and text.
 */
async function cancelWith(page: Page, url: string, tamper: string): Promise<{ status: number; text: string }> {
  await page.goto(url);
  await page.evaluate(tamper);
  const [answer] = await Promise.all([page.waitForNavigation(), page.click('button.danger')]);
  return { status: answer?.status() ?? 0, text: await page.locator('body').innerText() };
}

describe('console sign-in in Chromium', () => {
  it('sign in, own tasks only, cancel with CSRF, forged or missing CSRF refused, another server refused, sign out', async () => {
    assertBuilt();
    expect(existsSync(CHROMIUM), 'apt-get install chromium (see .ci/run)').toBe(true);
    const tokens = join(dir.path, 'tokens.json');
    writeFileSync(tokens, JSON.stringify({ [ALICE]: 'alice', [BOB]: 'bob' }));
    const a = await serveBuilt(join(dir.path, 'a.db'), ['--console', '--auth-tokens', tokens]);
    servers.push(a);
    const b = await serveBuilt(join(dir.path, 'b.db'), ['--console', '--auth-tokens', tokens]);
    servers.push(b);
    const mine = await task(a, ALICE, 'alice-1');
    const other = await task(a, ALICE, 'alice-2');
    const bobs = await task(a, BOB, 'bob-1');

    const launched = await launchChromium(dir.path);
    browser = launched.browser;
    const page = launched.page;

    // Without credentials: the sign-in page, which comes back to where the browser was going.
    await page.goto(`${base(a)}/console/tasks/${mine}`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await page.fill('input[name="token"]', 'not-a-token-of-this-server');
    await page.click('button[type="submit"]');
    expect(await page.locator('[data-notice]').innerText()).toContain('That token was refused.');
    await page.fill('input[name="token"]', ALICE);
    await page.click('button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe(`/console/tasks/${mine}`);
    expect(await page.locator('header').innerText()).toContain('signed in as token:alice');

    // The cookie: HttpOnly, SameSite=Strict, Path=/console, this server's own, a bounded lifetime.
    const cookies = await browser.cookies(`${base(a)}/console`);
    const cookie = cookies.find((c) => c.name === `terminus_console_${a.port}`);
    expect(cookie, JSON.stringify(cookies)).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(cookie!.secure).toBe(false); // plain http on loopback; Secure over https
    expect(cookie!.expires * 1000 - Date.now()).toBeGreaterThan(7 * 3600_000);
    expect(cookie!.expires * 1000 - Date.now()).toBeLessThanOrEqual(8 * 3600_000);
    // No script can read it (the page's own `document.cookie` is empty).
    expect(await page.evaluate('document.cookie')).toBe('');

    // S8: the list holds the caller's tasks, never another caller's; bob's page is "no such task".
    await page.goto(`${base(a)}/console`);
    const listed = await page
      .locator('tr[data-task]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-task')));
    expect(new Set(listed)).toEqual(new Set([mine, other]));
    const foreign = await page.goto(`${base(a)}/console/tasks/${bobs}`);
    expect(foreign?.status()).toBe(404);

    // Cancel through the page's form: it carries the session's CSRF token.
    await page.goto(`${base(a)}/console/tasks/${mine}`);
    await page.click('button.danger');
    expect(await page.locator('main').innerText()).toContain('Cancelled.');
    expect(await status(a, ALICE, mine)).toBe('cancelled');
    const csrf = await page.locator('form.sign-out input[name="csrf"]').getAttribute('value');
    expect(csrf).toMatch(/^[\w-]{43}$/);

    // The same form without the token, or with a forged one: refused, and the task runs on.
    const form = `document.querySelector('button.danger').form.querySelector('input[name="csrf"]')`;
    const missing = await cancelWith(page, `${base(a)}/console/tasks/${other}`, `${form}.remove()`);
    expect(missing.status).toBe(403);
    expect(missing.text).toContain('security token is missing or out of date');
    const forged = await cancelWith(
      page,
      `${base(a)}/console/tasks/${other}`,
      `${form}.value = ${JSON.stringify(`${csrf!.slice(0, -2)}AA`)}`,
    );
    expect(forged.status).toBe(403);
    expect(await status(a, ALICE, other)).toBe('working');

    // Another server does not know this session: neither under its own cookie name nor renamed.
    await page.goto(`${base(b)}/console`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await browser.addCookies([
      { name: `terminus_console_${b.port}`, value: cookie!.value, domain: '127.0.0.1', path: '/console' },
    ]);
    await page.goto(`${base(b)}/console`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');

    // Sign out: the session ends on the server, so the same cookie brought back is refused too.
    await page.goto(`${base(a)}/console`);
    await page.click('form.sign-out button');
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    expect(await page.locator('[data-notice]').innerText()).toContain('Signed out.');
    expect((await browser.cookies(`${base(a)}/console`)).some((c) => c.name === cookie!.name)).toBe(false);
    await browser.addCookies([{ name: cookie!.name, value: cookie!.value, domain: '127.0.0.1', path: '/console' }]);
    await page.goto(`${base(a)}/console`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');

    // Scripts keep the bearer header: the list, and a form post with no CSRF token (none to forge).
    const script = await fetch(`${base(a)}/console`, { headers: { authorization: `Bearer ${ALICE}` } });
    expect(script.status).toBe(200);
    expect(await script.text()).toContain(other);
    const cancel = await fetch(`${base(a)}/console/tasks/${other}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    });
    expect(cancel.status).toBe(303);
    expect(await status(a, ALICE, other)).toBe('cancelled');
    // A refused bearer header stays a 401 for a script, not a sign-in page.
    const wrong = await fetch(`${base(a)}/console`, {
      headers: { authorization: 'Bearer wrong-token-0123456789' },
      redirect: 'manual',
    });
    expect(wrong.status).toBe(401);
    await fetch(`${base(a)}/v1/operations/${bobs}:cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BOB}` },
    });
  }, 180_000);
});
