import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * tsc never deletes: the output of a source that was removed or renamed would stay in dist/, be
 * packed by `npm pack` and stay importable. Removes each output under `out` (`.js`, `.d.ts` and
 * their maps) whose source under `source` (`.ts`, `.mts`, `.tsx`) is gone, then each folder left
 * empty. Other files (the build stamp) stay. Returns the paths removed.
 */
export function pruneOrphans(out, source) {
  const removed = [];
  for (const entry of readdirSync(out, { withFileTypes: true })) {
    const path = join(out, entry.name);
    if (entry.isDirectory()) {
      removed.push(...pruneOrphans(path, join(source, entry.name)));
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      continue;
    }
    const stem = /^(.*?)(\.d\.ts|\.js)(\.map)?$/.exec(entry.name)?.[1];
    if (stem !== undefined && !['.ts', '.mts', '.tsx'].some((ext) => existsSync(join(source, stem + ext)))) {
      rmSync(path);
      removed.push(path);
    }
  }
  return removed;
}
