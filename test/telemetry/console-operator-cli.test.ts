/**
 * `terminus serve --console-operator` as a user runs it: from dist/ (needs `npm run build`), with a
 * real tokens file, the operator named by TERMINUS_CONSOLE_OPERATOR (issue 16 items 5 and 6).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BUILT as CLI, killAll, startServe, tempDir } from '../cli/helpers.js';

const OPS = 'ops-token-0123456789abcdef';
const ALICE = 'alice-token-0123456789abcd';

const dir = tempDir('terminus-operator-');
afterEach(() => killAll());
afterAll(() => dir.remove());

describe('terminus serve --console-operator', () => {
  it('TERMINUS_CONSOLE_OPERATOR makes that client an operator (owner filter); others are not', async () => {
    const tokens = join(dir.path, 'tokens.json');
    writeFileSync(tokens, JSON.stringify({ [OPS]: 'ops', [ALICE]: 'alice' }));
    const { url } = await startServe(mkdtempSync(join(dir.path, 'serve-')), ['--auth-tokens', tokens, '--console'], {
      built: true,
      env: { ...process.env, TERMINUS_CONSOLE_OPERATOR: 'ops' },
    });
    const base = url.replace(/\/mcp$/, '');
    const page = async (token: string) =>
      (await fetch(`${base}/console`, { headers: { authorization: `Bearer ${token}` } })).text();
    const ops = await page(OPS);
    expect(ops).toContain('signed in as <code>token:ops</code>');
    expect(ops).toContain('name="owner"');
    expect(await page(ALICE)).not.toContain('name="owner"');
  });

  it('is refused without --auth-*: an unauthenticated caller is never an operator', () => {
    const run = spawnSync(
      process.execPath,
      [CLI, 'serve', '--port', '0', '--db', join(dir.path, 't.db'), '--console', '--console-operator', 'ops'],
      { encoding: 'utf8' },
    );
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe(
      'terminus: --console-operator needs --auth-tokens or --auth-jwks (operators are client ids)',
    );
  });
});
