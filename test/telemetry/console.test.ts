import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { consoleRoutes } from '../../src/console/routes.js';
import { timelineRecorder } from '../../src/console/timeline.js';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { operationsRoutes } from '../../src/server/http/ops-routes.js';
import type { HttpServerHandle } from '../../src/server/http/serve.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { readinessProbe } from '../../src/telemetry/health.js';
import { text, tool, until } from '../runner/helpers.js';

/** `x-user: alice` authenticates as alice; no header is anonymous; `x-user: ?` is rejected. */
async function authenticate(req: IncomingMessage) {
  const user = req.headers['x-user'];
  if (user === undefined) return undefined;
  if (user === '?') throw new Error('bad credentials');
  return { token: String(user), clientId: String(user), scopes: [] };
}

const confirm = tool('confirm', async (_args, ctx) => {
  const schema = {
    type: 'object',
    properties: { confirm: { type: 'boolean' }, note: { type: 'string' }, times: { type: 'integer' } },
  };
  const reply = await ctx.requestInput(schema, 'Really?');
  return text(JSON.stringify(reply));
});

let opened: { engine: TaskEngine; http: HttpServerHandle; store: TaskStore } | undefined;
afterEach(async () => {
  await opened?.http.close();
  await opened?.engine.stop();
  await opened?.store.close();
  opened = undefined;
});

async function start(
  operators?: readonly string[],
  listAnonymous?: boolean,
): Promise<{ base: string; engine: TaskEngine; store: TaskStore }> {
  const store = createMemoryTaskStore();
  const timeline = timelineRecorder();
  const readiness = readinessProbe({ store, now: () => systemClock.now() });
  const engine = createEngine({
    store,
    tools: [confirm],
    clock: systemClock,
    ids: systemIds,
    claimIntervalMs: 20,
    observer: { observe: (e) => (timeline.observer.observe(e), readiness.observer.observe(e)) },
  });
  engine.start();
  const server = createTerminusServer({ engine });
  const http = await server.serveHttp({
    port: 0,
    authenticate,
    routes: [
      ...operationsRoutes({ readiness }),
      ...consoleRoutes({
        engine,
        timeline,
        ...(operators === undefined ? {} : { operators }),
        ...(listAnonymous === undefined ? {} : { listAnonymous }),
      }),
    ],
  });
  opened = { engine, http, store };
  return { base: http.url.replace(/\/mcp$/, ''), engine, store };
}

const taskIds = (page: string): string[] => [...page.matchAll(/data-task="([^"]+)"/g)].map((m) => m[1]!);

const form = (base: string, fields: Record<string, string>, user = 'alice') => ({
  method: 'POST',
  redirect: 'manual' as const,
  headers: { 'x-user': user, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

describe('console: owners, actions, origin (S8)', () => {
  it('shows a caller only its own tasks and lets only the owner act on them', async () => {
    const { base, engine } = await start();
    const { task } = await engine.submit({ owner: 'auth:alice', tool: 'confirm', args: {}, wire: 'mcp-tasks-ext' });
    await engine.submit({ owner: 'auth:bob', tool: 'confirm', args: { n: 2 }, wire: 'sep-1391' });

    const alice = await (await fetch(`${base}/console`, { headers: { 'x-user': 'alice' } })).text();
    expect(alice).toContain(`data-task="${task.id}"`);
    expect(alice.match(/data-task=/g)).toHaveLength(1);
    expect(alice).toContain('signed in as <code>auth:alice</code>');
    const bobList = await (await fetch(`${base}/console`, { headers: { 'x-user': 'bob' } })).text();
    expect(bobList).not.toContain(task.id);
    // A foreign task is "no such task", like an unknown id; the cancel changes nothing.
    expect((await fetch(`${base}/console/tasks/${task.id}`, { headers: { 'x-user': 'bob' } })).status).toBe(404);
    expect((await fetch(`${base}/console/tasks/${task.id}/cancel`, form(base, {}, 'bob'))).status).toBe(404);
    expect((await engine.get('auth:alice', task.id)).status).not.toBe('cancelled');
    // Same authentication as the API: rejected credentials are a 401 before any page.
    expect((await fetch(`${base}/console`, { headers: { 'x-user': '?' } })).status).toBe(401);
    // Filters: status and wire go to the store, tool to the page.
    const finished = await (await fetch(`${base}/console?status=completed`, { headers: { 'x-user': 'alice' } })).text();
    expect(finished).toContain('No task matches.');
    const onWire = await (await fetch(`${base}/console?wire=sep-1391`, { headers: { 'x-user': 'bob' } })).text();
    expect(onWire.match(/data-task=/g)).toHaveLength(1);
  });

  it('answers an input request from its form with typed values, and refuses a cross-site POST', async () => {
    const { base, engine } = await start();
    const { task } = await engine.submit({ owner: 'auth:alice', tool: 'confirm', args: {}, wire: 'mcp-tasks-ext' });
    const asked = await until(async () => {
      const t = await engine.get('auth:alice', task.id);
      return t.status === 'input_required' ? t : undefined;
    });
    const key = Object.keys(asked.inputRequests)[0]!;
    const detail = await (await fetch(`${base}/console/tasks/${task.id}`, { headers: { 'x-user': 'alice' } })).text();
    expect(detail).toContain(`name="key" value="${key}"`);
    expect(detail).toContain('Really?');

    const crossSite = {
      ...form(base, { key, action: 'accept' }),
      headers: { ...form(base, {}).headers, origin: 'http://evil.example' },
    };
    expect((await fetch(`${base}/console/tasks/${task.id}/answer`, crossSite)).status).toBe(403);
    expect((await fetch(`${base}/console/tasks/${task.id}/cancel`, { ...crossSite, body: '' })).status).toBe(403);

    const answered = await fetch(
      `${base}/console/tasks/${task.id}/answer`,
      form(base, { key, action: 'accept', 'field.confirm': 'true', 'field.note': 'ok', 'field.times': '3' }),
    );
    expect(answered.status).toBe(303);
    expect(answered.headers.get('location')).toContain('notice=Answer%20sent.');
    const done = await until(async () => {
      const t = await engine.get('auth:alice', task.id);
      return t.status === 'completed' ? t : undefined;
    });
    expect(JSON.parse((done.result?.['content'] as { text: string }[])[0]!.text)).toEqual({
      action: 'accept',
      content: { confirm: true, note: 'ok', times: 3 },
    });
    const page = await (await fetch(`${base}/console/tasks/${task.id}`, { headers: { 'x-user': 'alice' } })).text();
    expect(page).toContain('data-field="result"');
    expect(page).toContain(`input ${key} answered`);
    expect(page).toContain('epoch 1 on node');
    expect(page).not.toContain('Cancel task'); // a terminal task offers no cancel
  });
});

describe('console: the operator role', () => {
  const ids = (page: string): string[] => [...page.matchAll(/data-task="([^"]+)"/g)].map((m) => m[1]!);
  const as = (user?: string): RequestInit => ({ headers: user === undefined ? {} : { 'x-user': user } });

  it("an operator sees every owner's tasks, filters by owner and acts on them; others still see their own", async () => {
    // Operators are principals (this test's hook names `auth:<clientId>`). 'anonymous', '' and the
    // bare client id 'alice' are listed to show they grant nothing: only an authenticated principal matches.
    const { base, engine } = await start(['auth:ops', 'anonymous', '', 'alice']);
    const a = (await engine.submit({ owner: 'auth:alice', tool: 'confirm', args: {}, wire: 'mcp-tasks-ext' })).task;
    const b = (await engine.submit({ owner: 'auth:bob', tool: 'confirm', args: { n: 2 }, wire: 'sep-1391' })).task;
    const n = (await engine.submit({ owner: 'anonymous', tool: 'confirm', args: { n: 3 }, wire: 'aip-151' })).task;

    const all = await (await fetch(`${base}/console`, as('ops'))).text();
    // Sorted: tasks created in the same millisecond are ordered by their random ids.
    expect(ids(all).sort()).toEqual([n.id, b.id, a.id].sort());
    expect(all).toContain('data-owner="auth:bob"');
    expect(all).toContain('name="owner"');
    const bobs = await (await fetch(`${base}/console?owner=${encodeURIComponent('auth:bob')}`, as('ops'))).text();
    expect(ids(bobs)).toEqual([b.id]);
    // Owner and wire filters combine; the status filter still applies across owners.
    expect(ids(await (await fetch(`${base}/console?owner=auth%3Abob&wire=mcp-tasks-ext`, as('ops'))).text())).toEqual(
      [],
    );
    expect(ids(await (await fetch(`${base}/console?status=completed`, as('ops'))).text())).toEqual([]);
    // The list links a task's page with its owner; the operator reads and cancels bob's task there.
    expect(all).toContain(`href="/console/tasks/${b.id}?owner=auth%3Abob"`);
    const detail = await fetch(`${base}/console/tasks/${b.id}?owner=auth%3Abob`, as('ops'));
    expect(detail.status).toBe(200);
    expect(await detail.text()).toContain(`action="/console/tasks/${b.id}/cancel?owner=auth%3Abob"`);
    const cancelled = await fetch(`${base}/console/tasks/${b.id}/cancel?owner=auth%3Abob`, form(base, {}, 'ops'));
    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.get('location')).toBe(`/console/tasks/${b.id}?owner=auth%3Abob&notice=Cancelled.`);
    expect((await engine.get('auth:bob', b.id)).status).toBe('cancelled');

    // alice is no operator: ?owner= is ignored, bob's task stays "no such task".
    const alice = await (await fetch(`${base}/console?owner=auth%3Abob`, as('alice'))).text();
    expect(ids(alice)).toEqual([a.id]);
    expect(alice).not.toContain('name="owner"');
    expect((await fetch(`${base}/console/tasks/${b.id}?owner=auth%3Abob`, as('alice'))).status).toBe(404);
    expect((await fetch(`${base}/console/tasks/${a.id}/cancel?owner=auth%3Abob`, form(base, {}, 'alice'))).status).toBe(
      303,
    );
    expect((await engine.get('auth:alice', a.id)).status).toBe('cancelled');

    // Anonymous is never an operator, even with 'anonymous' in the list: it lists nothing (not even
    // anonymous tasks) and reaches only anonymous tasks, by id.
    const anonymous = await (await fetch(`${base}/console?owner=auth%3Aalice`, as())).text();
    expect(ids(anonymous)).toEqual([]);
    expect((await fetch(`${base}/console/tasks/${a.id}?owner=auth%3Aalice`, as())).status).toBe(404);
    expect((await fetch(`${base}/console/tasks/${n.id}`, as())).status).toBe(200);
  });

  it('an anonymous caller holds capabilities, never a namespace: it opens a task by id; its list is empty unless listAnonymous', async () => {
    const { base, engine } = await start();
    const mine = (await engine.submit({ owner: 'anonymous', tool: 'confirm', args: {}, wire: 'aip-151' })).task;
    const other = (await engine.submit({ owner: 'anonymous', tool: 'confirm', args: { n: 2 }, wire: 'aip-151' })).task;
    await engine.submit({ owner: 'auth:alice', tool: 'confirm', args: { n: 3 }, wire: 'mcp-tasks-ext' });

    const list = await (await fetch(`${base}/console`)).text();
    expect(taskIds(list)).toEqual([]);
    expect(list).toContain('data-unlisted');
    expect(list).toContain('action="/console/open"');
    // The header agrees with the notice below it: nobody signed in, not "signed in as anonymous".
    expect(list).toContain('<small>not signed in</small>');
    expect(list).not.toContain('signed in as');
    // Filters change nothing: there is no anonymous namespace to filter.
    expect(taskIds(await (await fetch(`${base}/console?status=working&status=input_required`)).text())).toEqual([]);

    const opened = await fetch(`${base}/console/open?id=${encodeURIComponent(mine.id)}`, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe(`/console/tasks/${encodeURIComponent(mine.id)}`);
    const detail = await fetch(`${base}/console/tasks/${mine.id}`);
    expect(detail.status).toBe(200);
    expect(await detail.text()).toContain(mine.id);
    // The detail of one task does not reveal the others.
    expect(await (await fetch(`${base}/console/tasks/${mine.id}`)).text()).not.toContain(other.id);
    await until(async () => (await engine.get('anonymous', mine.id)).status === 'input_required', 'input_required');
    const cancelled = await fetch(`${base}/console/tasks/${mine.id}/cancel`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(cancelled.status).toBe(303);
    expect((await engine.get('anonymous', mine.id)).status).toBe('cancelled');
    // Signed-in callers are unaffected.
    expect(taskIds(await (await fetch(`${base}/console`, { headers: { 'x-user': 'alice' } })).text())).toHaveLength(1);
  });

  it('/console/ is the list too, and the unlisted page says how to list anonymous tasks', async () => {
    const { base } = await start();
    const slash = await fetch(`${base}/console/?status=working`, { redirect: 'manual' });
    expect(slash.status).toBe(308);
    expect(slash.headers.get('location')).toBe('/console?status=working');
    const list = await (await fetch(`${base}/console`)).text();
    // The library's own switch; the CLI names its flag instead (test/telemetry/console-anonymous-cli.test.ts).
    expect(list).toContain('<code>listAnonymous: true</code>');
  });

  it('with listAnonymous an anonymous caller lists the anonymous tasks (only those)', async () => {
    const { base, engine } = await start(undefined, true);
    const n = (await engine.submit({ owner: 'anonymous', tool: 'confirm', args: {}, wire: 'aip-151' })).task;
    await engine.submit({ owner: 'auth:alice', tool: 'confirm', args: { n: 3 }, wire: 'mcp-tasks-ext' });
    const list = await (await fetch(`${base}/console`)).text();
    expect(taskIds(list)).toEqual([n.id]);
    expect(list).not.toContain('data-unlisted');
  });

  it("without operators nobody sees another owner's tasks", async () => {
    const { base, engine } = await start();
    const a = (await engine.submit({ owner: 'auth:alice', tool: 'confirm', args: {}, wire: 'mcp-tasks-ext' })).task;
    await engine.submit({ owner: 'auth:ops', tool: 'confirm', args: { n: 2 }, wire: 'mcp-tasks-ext' });
    const ops = await (await fetch(`${base}/console?owner=auth%3Aalice`, as('ops'))).text();
    expect(taskIds(ops)).not.toContain(a.id);
    expect(taskIds(ops)).toHaveLength(1);
  });
});

describe('/readyz', () => {
  it('is 503 with the failing check when the store cannot be read, 200 again once it can', async () => {
    const { base, store } = await start();
    await until(async () => (await fetch(`${base}/readyz`)).status === 200, 'ready');
    const get = store.get.bind(store);
    store.get = () => Promise.reject(new Error('database is locked'));
    const down = await fetch(`${base}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({
      ready: false,
      checks: { store: { ok: false, error: 'database is locked' } },
    });
    store.get = get;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it('is 503 while the claim loop has not run', async () => {
    const store = createMemoryTaskStore();
    const readiness = readinessProbe({ store, now: () => systemClock.now() });
    expect(await readiness.check()).toMatchObject({
      ready: false,
      checks: { store: { ok: true }, runner: { ok: false } },
    });
  });

  it('on a node that runs no tools (serve --no-runner) checks the store only', async () => {
    const store = createMemoryTaskStore();
    const readiness = readinessProbe({ store, now: () => systemClock.now(), runner: false });
    expect(await readiness.check()).toMatchObject({
      ready: true,
      checks: { store: { ok: true }, runner: { ok: true, disabled: true } },
    });
    const get = store.get.bind(store);
    store.get = () => Promise.reject(new Error('database is locked'));
    expect((await readiness.check()).ready).toBe(false);
    store.get = get;
  });
});
