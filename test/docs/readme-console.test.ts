/**
 * The README's console paragraph, run as a new user reads it: the command it gives, started after
 * the tour's calls (anonymous, no credentials), shows those calls in the console's list, as the
 * paragraph promises ("the tasks in flight and recent ones"). The flags are read from the README
 * itself, so a command that drops `--console-list-anonymous` (an empty list for every anonymous
 * caller) fails here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli/main.js');

let child: ChildProcess | undefined;
let dir: string | undefined;
afterEach(() => {
  if (child?.pid !== undefined && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The flags of the README's console command: `npm start -- FLAGS`, in the "The console." paragraph. */
function readmeConsoleFlags(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const paragraph = readme.slice(readme.indexOf('**The console.**')).split('\n\n')[0]!.replace(/\n/g, ' ');
  const command = /`npm start -- ([^`]+)`/.exec(paragraph);
  expect(command, 'the console paragraph gives an `npm start -- ...` command').not.toBeNull();
  return command![1]!.trim().split(/\s+/);
}

async function serve(flags: string[]): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'terminus-readme-console-'));
  // A clean environment for the switch: the README's flags alone decide what the list shows.
  const env = { ...process.env };
  delete env.TERMINUS_CONSOLE_LIST_ANONYMOUS;
  const proc = spawn(process.execPath, [CLI, 'serve', ...flags, '--port', '0', '--db', join(dir, 't.db')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  let out = '';
  return new Promise((resolveUrl, reject) => {
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const url = /http:\/\/\S+\/mcp/.exec(out)?.[0];
      if (url !== undefined) resolveUrl(url.replace(/\/mcp$/, ''));
    });
    proc.on('exit', (code) => reject(new Error(`serve exited ${String(code)}`)));
  });
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
