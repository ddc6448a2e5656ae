// `npm start` runs this first: it rebuilds dist/ only when a source or build setting is newer than
// the last build, so a start with nothing changed costs a directory walk (~50 ms), not a full tsc
// run (10-25 s on a loaded 2-core machine).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { pruneOrphans } from './prune-orphans.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-stamp');

function newest(path) {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(info.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'].map((p) => join(root, p));
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
// `--force` (npm run build) always builds, and leaves the stamp so the next check is cheap.
const force = process.argv.includes('--force');
if (force || inputs.some((p) => existsSync(p) && newest(p) > built)) {
  if (!force) process.stderr.write('building dist/ (sources changed since the last build)\n');
  const started = Date.now();
  execFileSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')],
    {
      stdio: 'inherit',
    },
  );
  pruneOrphans(join(root, 'dist'), join(root, 'src'));
  writeFileSync(stamp, `${new Date(started).toISOString()}\n`);
}
