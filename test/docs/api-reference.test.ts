import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `npm run docs` (TypeDoc over the package entries, typedoc.json) must pass with no warning: every
 * type a public signature names is reachable from some entry. Run here without writing docs/api/,
 * so a new public type left out of the entries fails `npm test`, not only CI's `npm run docs`.
 */
const ROOT = resolve(import.meta.dirname, '../..');

describe('the API reference', () => {
  it('TypeDoc builds it from the package entries with no warning', () => {
    const run = spawnSync(process.execPath, [resolve(ROOT, 'node_modules/typedoc/bin/typedoc'), '--emit', 'none'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
    });
    const output = `${run.stdout}${run.stderr}`;
    expect(output).not.toMatch(/\[warning\]|\[error\]/);
    expect(run.status, output).toBe(0);
  }, 180_000);
});
