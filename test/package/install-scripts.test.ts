import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `npm ci` on a fresh clone, the README's first command, ends without a warning to act on: npm 11
 * lists every installed package whose install script `allowScripts` does not name. Each one in the
 * lock is named, with the choice made for it (better-sqlite3 builds its driver; esbuild's
 * postinstall only checks its binary, which vitest and tsx find without it).
 */
const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string): unknown => JSON.parse(readFileSync(join(ROOT, path), 'utf8'));

describe('install scripts of a clone', () => {
  it('allowScripts names every package of the lock that has an install script', () => {
    const lock = read('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };
    const manifest = read('package.json') as { allowScripts?: Record<string, boolean> };
    const scripted = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
      .map(([path]) => path.replace(/^.*node_modules\//, ''))
      .sort();
    expect(scripted.length).toBeGreaterThan(0);
    expect(scripted.filter((name) => typeof manifest.allowScripts?.[name] !== 'boolean')).toEqual([]);
  });
});
