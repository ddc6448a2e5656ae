/**
 * The console's sign-in sessions, over real HTTP with the server's own bearer hook: bounded in
 * number (the oldest goes) and in lifetime (never past a JWT's expiry), a wrong token refused on the
 * sign-in page, `next` kept to this console (no open redirect), `Secure` behind an https proxy, and a
 * stale cookie dropped on the way to the sign-in page. The browser flows: sign-in-browser.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { consoleRoutes } from '../../src/console/routes.js';
import { verifyBearer } from '../../src/console/sign-in.js';
import { SessionStore } from '../../src/console/sessions.js';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { createBearerAuth } from '../../src/server/auth/index.js';
import type { HttpServerHandle } from '../../src/server/http/serve.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { text, tool, until } from '../runner/helpers.js';

const ALICE = 'alice-session-token-0123456789';
let opened: { engine: TaskEngine; http: HttpServerHandle } | undefined;
afterEach(async () => {
  await opened?.http.close();
  await opened?.engine.stop();
  opened = undefined;
});

async function start(signIn: { maxSessions?: number; sessionTtlMs?: number; now?: () => number } = {}) {
  const engine = createEngine({
    store: createMemoryTaskStore(),
    tools: [
      tool('noop', async () => text('ok')),
      tool('ask', async (_args, ctx) => {
        const schema = { type: 'object', properties: { sure: { type: 'boolean' } } };
        const reply = (await ctx.requestInput(schema, 'Sure?')) as { action: string };
        return text(reply.action);
      }),
    ],
    clock: systemClock,
    ids: systemIds,
  });
  const authenticate = createBearerAuth({ tokens: { [ALICE]: 'alice' } });
  const http = await createTerminusServer({ engine }).serveHttp({
    port: 0,
    authenticate,
    routes: consoleRoutes({ engine, signIn: { verify: verifyBearer(authenticate), ...signIn } }),
  });
  opened = { engine, http };
  engine.start();
  return http.url.replace(/\/mcp$/, '');
}

const form = (fields: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual',
});

/** Signs in; the `name=value` of the session cookie and the whole Set-Cookie line. */
async function signIn(base: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const answer = await fetch(`${base}/console/sign-in`, {
    ...form({ token: ALICE, ...extra }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
  const line = answer.headers.get('set-cookie') ?? '';
  return { answer, line, cookie: line.split(';')[0]! };
}

const list = (base: string, cookie: string) => fetch(`${base}/console`, { headers: { cookie }, redirect: 'manual' });

describe('console sessions', () => {
  it('a wrong or empty token stays on the sign-in page; a right one opens a session for the console path only', async () => {
    const base = await start();
    const wrong = await fetch(`${base}/console/sign-in`, form({ token: 'wrong-token-0123456789abcdef' }));
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('That token was refused.');
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect((await fetch(`${base}/console/sign-in`, form({ token: '' }))).status).toBe(400);
    const { answer, line, cookie } = await signIn(base);
    expect(answer.status).toBe(303);
    expect(line).toMatch(/^terminus_console_\d+=[\w-]{43}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=28800$/);
    expect((await list(base, cookie)).status).toBe(200);
  });

  it('next goes back into this console only, never to another site', async () => {
    const base = await start();
    expect((await signIn(base, { next: '/console/tasks/abc?log=tail' })).answer.headers.get('location')).toBe(
      '/console/tasks/abc?log=tail',
    );
    for (const next of ['//evil.example/console', 'https://evil.example/', '/mcp', '/consolex'])
      expect((await signIn(base, { next })).answer.headers.get('location')).toBe('/console');
  });

  it('is Secure behind a proxy that says https', async () => {
    const base = await start();
    expect((await signIn(base, {}, { 'x-forwarded-proto': 'https' })).line).toMatch(/; Secure$/);
  });

  it('at most maxSessions live at once: the oldest is signed out first', async () => {
    const base = await start({ maxSessions: 2 });
    const first = await signIn(base);
    const second = await signIn(base);
    const third = await signIn(base);
    expect((await list(base, first.cookie)).status).toBe(303);
    expect((await list(base, second.cookie)).status).toBe(200);
    expect((await list(base, third.cookie)).status).toBe(200);
  });

  it('a session ends with its lifetime; the stale cookie is dropped on the way to the sign-in page', async () => {
    let now = 1_000_000;
    const base = await start({ sessionTtlMs: 60_000, now: () => now });
    const { cookie, line } = await signIn(base);
    expect(line).toContain('Max-Age=60');
    now += 59_000;
    expect((await list(base, cookie)).status).toBe(200);
    now += 2_000;
    const expired = await list(base, cookie);
    expect(expired.status).toBe(303);
    expect(expired.headers.get('location')).toBe('/console/sign-in?next=%2Fconsole');
    expect(expired.headers.get('set-cookie')).toMatch(/^terminus_console_\d+=; Path=\/console;.*Max-Age=0/);
  });
});

describe('console session forms', () => {
  it('an answer posted under a session needs its CSRF token: refused without it, sent with it', async () => {
    const base = await start();
    const engine = opened!.engine;
    const { task } = await engine.submit({ owner: 'token:alice', tool: 'ask', args: {}, wire: 'aip-151' });
    await until(async () =>
      (await engine.get('token:alice', task.id)).status === 'input_required' ? true : undefined,
    );
    const { cookie } = await signIn(base);
    const pageHtml = await (await fetch(`${base}/console/tasks/${task.id}`, { headers: { cookie } })).text();
    const key = /name="key" value="([^"]+)"/.exec(pageHtml)![1]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(pageHtml)![1]!;
    const answer = (fields: Record<string, string>) =>
      fetch(`${base}/console/tasks/${task.id}/answer`, {
        ...form({ key, action: 'accept', 'field.sure': 'true', ...fields }),
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      });
    expect((await answer({})).status).toBe(403);
    expect((await answer({ csrf: 'x'.repeat(43) })).status).toBe(403);
    expect((await engine.get('token:alice', task.id)).status).toBe('input_required');
    const sent = await answer({ csrf });
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toContain('notice=Answer%20sent.');
  });
});

describe('SessionStore', () => {
  it("never outlives the token: a JWT's expiry ends its session first", () => {
    const now = 1_700_000_000_000;
    const store = new SessionStore({ ttlMs: 3_600_000, now: () => now });
    const { session } = store.create({ token: 't', clientId: 'a', scopes: [], expiresAt: now / 1000 + 60 });
    expect(session.expiresAt).toBe(now + 60_000);
    const { id } = store.create({ token: 't', clientId: 'a', scopes: [] });
    expect(store.get(id)?.expiresAt).toBe(now + 3_600_000);
    expect(store.get(`${id}x`)).toBeUndefined();
  });
});
