import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 15 item 4: what `npm pack` ships. Only dist/ (no tests, no TypeScript sources, no source
 * maps pointing at sources the package lacks), LICENSE, README and CHANGELOG; and every packed module
 * is one an entry point (package.json `exports` and `bin`) reaches through its imports: nothing
 * the exports do not need. Reads the built dist/ (`npm run build` first).
 */
const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, { types: string; default: string }>;
  bin: Record<string, string>;
  license: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

let files: string[];

beforeAll(async () => {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [pack] = JSON.parse(stdout) as { files: { path: string }[] }[];
  files = (pack?.files ?? []).map((f) => f.path);
}, 60_000);

/** Relative module specifiers of one built file (static imports, re-exports, dynamic imports). */
function importsOf(file: string): string[] {
  // Comments out first: JSDoc examples name modules of the reader's project.
  const code = readFileSync(join(ROOT, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  // Any relative `.js` literal: imports, and `new URL('./worker.js', import.meta.url)` (sim/pool.ts).
  const pattern = /['"](\.{1,2}\/[^'"\s]+\.js)['"]/g;
  const found = [...code.matchAll(pattern)].map((m) => m[1] ?? '');
  return found.map((spec) => normalize(join(dirname(file), spec)));
}

/** Every file `entries` reach through relative imports (`.d.ts` files name their imports `.js`). */
function reachable(entries: readonly string[], declarations = false): Set<string> {
  const seen = new Set<string>();
  const queue = [...entries];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    queue.push(...importsOf(file).map((f) => (declarations ? f.replace(/\.js$/, '.d.ts') : f)));
  }
  return seen;
}

describe('npm pack contents', () => {
  it('ships dist, LICENSE, README, CHANGELOG and package.json only', () => {
    const others = files.filter((f) => !f.startsWith('dist/'));
    expect(others.sort()).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json']);
    expect(files.filter((f) => f.endsWith('.map') || (f.endsWith('.ts') && !f.endsWith('.d.ts')))).toEqual([]);
    expect(files.filter((f) => /(^|\/)(test|tests|__tests__)\/|\.test\./.test(f))).toEqual([]);
  });

  it('packs the eight entries, one per audience, each with its types', () => {
    expect(Object.keys(manifest.exports)).toEqual([
      '.',
      './client',
      './wires',
      './telemetry',
      './bridge',
      './sqlite',
      './postgres',
      './testing',
    ]);
    for (const [entry, target] of Object.entries(manifest.exports)) {
      const name = entry === '.' ? 'index' : entry.slice(2);
      expect(target).toEqual({ types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` });
      expect(files).toContain(normalize(target.default));
      expect(files).toContain(normalize(target.types));
    }
  });

  it('LICENSE is the license package.json names', () => {
    expect(manifest.license).toBe('MIT');
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
  });

  it('every packed module is reached from an entry point (exports, bin)', () => {
    const built = statSync(join(ROOT, 'dist', 'index.js')).mtimeMs;
    expect(built, 'dist/ is missing: run `npm run build`').toBeGreaterThan(0);
    const entries = [
      ...Object.values(manifest.exports).map((e) => normalize(e.default)),
      ...Object.values(manifest.bin).map((b) => normalize(b)),
    ];
    const reached = reachable(entries);
    const typed = reachable(
      [
        ...Object.values(manifest.exports).map((e) => normalize(e.types)),
        ...[...reached].map((f) => f.replace(/\.js$/, '.d.ts')),
      ],
      true,
    );
    // A module of types only compiles to an empty .js beside the .d.ts the types need.
    const needed = (f: string) => reached.has(f) || typed.has(f.replace(/\.js$/, '.d.ts'));
    expect(files.filter((f) => f.endsWith('.js') && !needed(f))).toEqual([]);
    expect(
      files.filter((f) => f.endsWith('.d.ts') && !typed.has(f) && !reached.has(f.replace(/\.d\.ts$/, '.js'))),
    ).toEqual([]);
  });
  it("the types of every entry resolve in a project that installs only the package's dependencies", () => {
    // A consumer's `tsc` (skipLibCheck off, its default) reads each bare module a packed .d.ts
    // imports: that module must bring its own types, or its @types package must be a dependency.
    const typed = reachable(
      Object.values(manifest.exports).map((e) => normalize(e.types)),
      true,
    );
    const bare = new Set<string>();
    for (const file of typed) {
      // Comments out first: JSDoc examples import from the reader's side (`mcp-terminus`).
      const code = readFileSync(join(ROOT, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const m of code.matchAll(/(?:from|import)\s*\(?\s*['"]([^'".][^'"]*)['"]/g)) {
        const spec = m[1] ?? '';
        if (spec.startsWith('node:')) continue; // @types/node: every Node project has it
        bare.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
      }
    }
    const installed = { ...manifest.dependencies, ...manifest.peerDependencies };
    const ownTypes = (name: string): boolean => {
      const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      return pkg.types !== undefined || pkg.typings !== undefined || JSON.stringify(pkg.exports ?? {}).includes('.d.');
    };
    const untyped = [...bare]
      .sort()
      .filter(
        (name) =>
          !(name in installed) ||
          (!ownTypes(name) && !(`@types/${name.replace(/^@/, '').replace('/', '__')}` in installed)),
      );
    expect(untyped).toEqual([]);
  });
});
