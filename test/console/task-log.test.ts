/**
 * The console's task page shows the task's own log (issue 18): escaped (a log is untrusted text),
 * the lines the per-task bound dropped counted, pages by cursor, owned like the page itself (a
 * foreign caller gets the same 404 as for an unknown id, S8). A real engine, store and HTTP server.
 */
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { CONSOLE_LOG_LINES } from '../../src/console/log.js';
import { consoleRoutes } from '../../src/console/routes.js';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import type { HttpServerHandle } from '../../src/server/http/serve.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { text, tool, until } from '../runner/helpers.js';

async function authenticate(req: IncomingMessage) {
  const user = req.headers['x-user'];
  return user === undefined ? undefined : { token: String(user), clientId: String(user), scopes: [] };
}

/** Logs `n` lines (the first one hostile markup, one with fields, one on the output stream), then ends. */
const chatty = tool('chatty', async (args, ctx) => {
  await ctx.log('<script>alert("x")</script> & <b>bold</b>');
  await ctx.log('case 2 failed', { case: 2, ms: 17 });
  await ctx.output('partial: 40%');
  for (let i = 4; i <= (args.n ?? 3); i++) await ctx.log(`line ${i}`);
  return text('ok');
});

let opened: { engine: TaskEngine; http: HttpServerHandle } | undefined;
afterEach(async () => {
  await opened?.http.close();
  await opened?.engine.stop();
  opened = undefined;
});

async function start(maxLines: number): Promise<{ base: string; engine: TaskEngine }> {
  const engine = createEngine({
    store: createMemoryTaskStore(),
    tools: [chatty],
    clock: systemClock,
    ids: systemIds,
    claimIntervalMs: 20,
    logLimits: { maxLines },
  });
  engine.start();
  const http = await createTerminusServer({ engine }).serveHttp({
    port: 0,
    authenticate,
    routes: consoleRoutes({ engine }),
  });
  opened = { engine, http };
  return { base: http.url.replace(/\/mcp$/, ''), engine };
}

const as = (user: string) => ({ headers: { 'x-user': user } });

async function finished(engine: TaskEngine, id: string): Promise<void> {
  await until(async () => ((await engine.get('auth:alice', id)).status === 'completed' ? true : undefined));
}

describe('console: the task log on the task page', () => {
  it('shows every line escaped, fields and the output stream, and the end of the log', async () => {
    const { base, engine } = await start(100);
    const { task } = await engine.submit({ owner: 'auth:alice', tool: 'chatty', args: { n: 5 }, wire: 'aip-151' });
    await finished(engine, task.id);
    const page = await (await fetch(`${base}/console/tasks/${task.id}`, as('alice'))).text();
    expect(page).toContain('<h2 id="log">Log</h2>');
    expect(page.match(/<tr data-seq="/g)).toHaveLength(5);
    // Escaped: the hostile line is text, never markup.
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain('<b>bold</b>');
    expect(page).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;');
    expect(page).toContain('{&quot;case&quot;:2,&quot;ms&quot;:17}');
    expect(page).toMatch(/<tr data-seq="3" data-epoch="1" class="output">/);
    expect(page).toContain('End of the log: the task ended.');
    expect(page).not.toContain('data-field="log-dropped"');
    // S8: another caller's request for the page is the 404 of an unknown id, log included.
    const foreign = await fetch(`${base}/console/tasks/${task.id}`, as('bob'));
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).not.toContain('case 2 failed');
  });

  it('counts the lines the per-task bound dropped, and pages by cursor', async () => {
    const { base, engine } = await start(CONSOLE_LOG_LINES + 20);
    const n = CONSOLE_LOG_LINES + 60;
    const { task } = await engine.submit({ owner: 'auth:alice', tool: 'chatty', args: { n }, wire: 'aip-151' });
    await finished(engine, task.id);
    const first = await (await fetch(`${base}/console/tasks/${task.id}`, as('alice'))).text();
    expect(first).toMatch(/data-field="log-dropped">\s*40 oldest line\(s\) dropped by the server's per-task bound/);
    const seqs = (html: string): number[] => [...html.matchAll(/<tr data-seq="(\d+)"/g)].map((m) => Number(m[1]));
    const one = seqs(first);
    expect(one).toHaveLength(CONSOLE_LOG_LINES);
    expect(one[0]).toBe(41);
    const next = /href="([^"]+log_after=(\d+)#log)"/.exec(first);
    expect(next?.[2]).toBe(String(40 + CONSOLE_LOG_LINES));
    const second = await (await fetch(`${base}${next![1]!.replaceAll('&amp;', '&')}`, as('alice'))).text();
    const two = seqs(second);
    expect(two).toEqual(Array.from({ length: 20 }, (_, i) => 41 + CONSOLE_LOG_LINES + i));
    expect(second).toContain('End of the log: the task ended.');
  });

  it('a long log has a tail link: the last lines, with links back to the start and to the lines before', async () => {
    const { base, engine } = await start(10_000);
    const n = 2 * CONSOLE_LOG_LINES + 30;
    const { task } = await engine.submit({ owner: 'auth:alice', tool: 'chatty', args: { n }, wire: 'aip-151' });
    await finished(engine, task.id);
    const seqs = (html: string): number[] => [...html.matchAll(/<tr data-seq="(\d+)"/g)].map((m) => Number(m[1]));
    const link = (html: string, name: RegExp): string => {
      const href = new RegExp(`<a href="([^"]+)"[^>]*>${name.source}`).exec(html)?.[1];
      expect(href, html.slice(-2000)).toBeDefined();
      return `${base}${href!.replaceAll('&amp;', '&')}`;
    };
    const first = await (await fetch(`${base}/console/tasks/${task.id}`, as('alice'))).text();
    expect(seqs(first)[0]).toBe(1);
    expect(first).toContain(`the tail (last ${CONSOLE_LOG_LINES} lines of ${n})`);

    // A plain link (no script): the last CONSOLE_LOG_LINES lines, ending with the log's last line.
    const tail = await (await fetch(link(first, /the tail/), as('alice'))).text();
    expect(seqs(tail)).toEqual(Array.from({ length: CONSOLE_LOG_LINES }, (_, i) => n - CONSOLE_LOG_LINES + 1 + i));
    expect(tail).toContain(`The last lines of the log (${n} in all).`);
    expect(tail).toContain('End of the log: the task ended.');
    // Back: the lines just before the tail, and the start.
    const earlier = await (await fetch(link(tail, /earlier lines/), as('alice'))).text();
    expect(seqs(earlier)).toEqual(
      Array.from({ length: CONSOLE_LOG_LINES }, (_, i) => n - 2 * CONSOLE_LOG_LINES + 1 + i),
    );
    expect(seqs(await (await fetch(link(tail, /from the start/), as('alice'))).text())[0]).toBe(1);
    // S8: the tail of another caller's task is the 404 of an unknown id.
    expect((await fetch(`${base}/console/tasks/${task.id}?log=tail`, as('bob'))).status).toBe(404);
  });

  it('a short log has no tail link, and its tail is the whole log', async () => {
    const { base, engine } = await start(100);
    const { task } = await engine.submit({ owner: 'auth:alice', tool: 'chatty', args: { n: 5 }, wire: 'aip-151' });
    await finished(engine, task.id);
    const page = await (await fetch(`${base}/console/tasks/${task.id}`, as('alice'))).text();
    expect(page).not.toContain('data-link="log-tail"');
    const tail = await (await fetch(`${base}/console/tasks/${task.id}?log=tail`, as('alice'))).text();
    expect(tail.match(/<tr data-seq="/g)).toHaveLength(5);
  });
});
