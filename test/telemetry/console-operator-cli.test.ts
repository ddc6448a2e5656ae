/**
 * `terminus serve --console-operator` as a user runs it: from dist/ (needs `npm run build`), with a
 * real tokens file, the operator named by TERMINUS_CONSOLE_OPERATOR (issue 16 items 5 and 6).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const CLI = join(resolve(import.meta.dirname, '../..'), 'dist/cli/main.js');
const OPS = 'ops-token-0123456789abcdef';
const ALICE = 'alice-token-0123456789abcd';

let child: ChildProcess | undefined;
let dir: string | undefined;
afterEach(() => {
  if (child?.pid !== undefined && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function listening(proc: ChildProcess): Promise<string> {
  let out = '';
  return new Promise((resolveUrl, reject) => {
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const url = /http:\/\/\S+\/mcp/.exec(out)?.[0];
      if (url !== undefined) resolveUrl(url.replace(/\/mcp$/, ''));
    });
    proc.on('exit', (code) => reject(new Error(`serve exited ${String(code)}`)));
  });
}

describe('terminus serve --console-operator', () => {
  it('TERMINUS_CONSOLE_OPERATOR makes that client an operator (owner filter); others are not', async () => {
    dir = mkdtempSync(join(tmpdir(), 'terminus-operator-'));
    const tokens = join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify({ [OPS]: 'ops', [ALICE]: 'alice' }));
    child = spawn(
      process.execPath,
      [CLI, 'serve', '--port', '0', '--db', join(dir, 't.db'), '--auth-tokens', tokens, '--console'],
      { env: { ...process.env, TERMINUS_CONSOLE_OPERATOR: 'ops' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const base = await listening(child);
    const page = async (token: string) =>
      (await fetch(`${base}/console`, { headers: { authorization: `Bearer ${token}` } })).text();
    const ops = await page(OPS);
    expect(ops).toContain('signed in as <code>token:ops</code>');
    expect(ops).toContain('name="owner"');
    expect(await page(ALICE)).not.toContain('name="owner"');
  });

  it('is refused without --auth-*: an unauthenticated caller is never an operator', () => {
    dir = mkdtempSync(join(tmpdir(), 'terminus-operator-'));
    const run = spawnSync(
      process.execPath,
      [CLI, 'serve', '--port', '0', '--db', join(dir, 't.db'), '--console', '--console-operator', 'ops'],
      { encoding: 'utf8' },
    );
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe(
      'terminus: --console-operator needs --auth-tokens or --auth-jwks (operators are client ids)',
    );
  });
});
