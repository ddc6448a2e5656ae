import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs build script, without types
import { pruneOrphans } from '../../scripts/prune-orphans.mjs';

const prune = pruneOrphans as (out: string, source: string) => string[];
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tree(root: string, files: readonly string[]): void {
  for (const file of files) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), '');
  }
}

function list(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(root.length + 1))
    .sort();
}

describe('the build prunes dist/ of outputs whose source is gone', () => {
  it('removes a deleted module’s .js, .d.ts and maps and its emptied folder; keeps the rest and the stamp', () => {
    const root = mkdtempSync(join(tmpdir(), 'prune-'));
    dirs.push(root);
    tree(join(root, 'src'), ['index.ts', 'cli/main.ts', 'a/b.mts']);
    const outputs = (stem: string) => [`${stem}.js`, `${stem}.js.map`, `${stem}.d.ts`, `${stem}.d.ts.map`];
    tree(join(root, 'dist'), [
      '.build-stamp',
      ...outputs('index'),
      ...outputs('cli/main'),
      ...outputs('cli/handler-threads'),
      ...outputs('runner/threads/pool'),
      'a/b.js',
    ]);
    const removed = prune(join(root, 'dist'), join(root, 'src'));
    expect(removed).toHaveLength(8);
    expect(list(join(root, 'dist'))).toEqual(
      ['.build-stamp', 'a/b.js', ...outputs('cli/main'), ...outputs('index')].sort(),
    );
    expect(readdirSync(join(root, 'dist'))).not.toContain('runner');
  });
});
