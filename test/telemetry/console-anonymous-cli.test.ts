/**
 * The console of `terminus serve --console` without credentials, as a user runs it from dist/: an
 * anonymous caller holds capabilities, never a namespace (docs/operations.md, "Identity and anonymous callers"),
 * so the list shows no anonymous task and a task opens by its id; TERMINUS_CONSOLE_LIST_ANONYMOUS
 * (`--console-list-anonymous`) lists them on a loopback console; with --auth-* the flag is refused.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BUILT as CLI, killAll, startServe, tempDir } from '../cli/helpers.js';

const dir = tempDir('terminus-console-anon-');
afterEach(() => killAll());
afterAll(() => dir.remove());

/** The built CLI's `serve --console` (no credentials); the console's base URL. */
async function serve(env: Record<string, string> = {}): Promise<string> {
  const { url } = await startServe(mkdtempSync(join(dir.path, 'serve-')), ['--console'], {
    built: true,
    env: { ...process.env, ...env },
  });
  return url.replace(/\/mcp$/, '');
}

/** An anonymous AIP-151 task (the demo `migrate` waits for a confirmation); its id. */
async function anonymousTask(base: string): Promise<string> {
  const answer = await fetch(`${base}/v1/tools/migrate:run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { table: 'orders', rows: 10 } }),
  });
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { name: string }).name.replace(/^operations\//, '');
}

const rows = (page: string): string[] => [...page.matchAll(/data-task="([^"]+)"/g)].map((m) => m[1]!);

describe('terminus serve --console without credentials', () => {
  it('lists no anonymous task; the task opens by its id', async () => {
    const base = await serve();
    const id = await anonymousTask(base);
    const list = await (await fetch(`${base}/console`)).text();
    expect(rows(list)).toEqual([]);
    expect(list).toContain('anonymous tasks are not listed');
    // The page names the switch that lists them, as the CLI spells it.
    expect(list).toContain('<code>--console-list-anonymous</code>');
    const opened = await fetch(`${base}/console/open?id=${id}`);
    expect(opened.status).toBe(200);
    expect(opened.url).toBe(`${base}/console/tasks/${id}`);
    expect(await opened.text()).toContain(id);
  });

  it('TERMINUS_CONSOLE_LIST_ANONYMOUS=1 lists them (loopback, one person’s machine)', async () => {
    const base = await serve({ TERMINUS_CONSOLE_LIST_ANONYMOUS: '1' });
    const id = await anonymousTask(base);
    expect(rows(await (await fetch(`${base}/console`)).text())).toEqual([id]);
  });

  it('--console-list-anonymous is refused with --auth-*: no caller is anonymous then', () => {
    const tokens = join(dir.path, 'tokens.json');
    writeFileSync(tokens, JSON.stringify({ 'alice-token-0123456789abcd': 'alice' }));
    const run = spawnSync(
      process.execPath,
      [CLI, 'serve', '--port', '0', '--db', join(dir.path, 't.db'), '--auth-tokens', tokens, '--console'],
      { encoding: 'utf8', env: { ...process.env, TERMINUS_CONSOLE_LIST_ANONYMOUS: 'true' } },
    );
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe(
      'terminus: --console-list-anonymous is for a console without --auth-tokens / --auth-jwks (callers are signed in)',
    );
  });
});
