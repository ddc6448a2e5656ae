/**
 * The README's console paragraph, run as a new user reads it: the command it gives, started after
 * the tour's calls (anonymous, no credentials), shows those calls in the console's list, as the
 * paragraph promises ("the tasks in flight and recent ones"). The flags are read from the README
 * itself, so a command that drops `--console-list-anonymous` (an empty list for every anonymous
 * caller) fails here.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killAll, ROOT, startServe, tempDir } from '../cli/helpers.js';

const dir = tempDir('terminus-readme-console-');
afterEach(() => killAll());
afterAll(() => dir.remove());

/** The flags of the README's console command: `npm start -- FLAGS`, in the "The console." paragraph. */
function readmeConsoleFlags(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const paragraph = readme.slice(readme.indexOf('**The console.**')).split('\n\n')[0]!.replace(/\n/g, ' ');
  const command = /`npm start -- ([^`]+)`/.exec(paragraph);
  expect(command, 'the console paragraph gives an `npm start -- ...` command').not.toBeNull();
  return command![1]!.trim().split(/\s+/);
}

/** The built CLI with the README's flags alone deciding what the list shows; the console's base URL. */
async function serve(flags: string[]): Promise<string> {
  const env = { ...process.env };
  delete env.TERMINUS_CONSOLE_LIST_ANONYMOUS;
  const { url } = await startServe(mkdtempSync(join(dir.path, 'serve-')), flags, { built: true, env });
  return url.replace(/\/mcp$/, '');
}

describe('README: the console', () => {
  it('the command it gives lists the anonymous calls of the tour', async () => {
    const flags = readmeConsoleFlags();
    expect(flags).toContain('--console');
    const base = await serve(flags);
    // An anonymous call, as `terminus call` without credentials makes one (AIP-151: one request).
    const answer = await fetch(`${base}/v1/tools/migrate:run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { table: 'orders', rows: 10 } }),
    });
    expect(answer.status).toBe(200);
    const id = ((await answer.json()) as { name: string }).name.replace(/^operations\//, '');
    const list = await (await fetch(`${base}/console`)).text();
    expect([...list.matchAll(/data-task="([^"]+)"/g)].map((m) => m[1])).toEqual([id]);
  });
});
