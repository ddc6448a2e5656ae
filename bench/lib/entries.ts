/**
 * How the harness starts its TypeScript processes. Under tsx a server start costs seconds on a
 * loaded 2-core machine (5.6-6.9 s measured at load 17, against 2.2-2.5 s for the same entry
 * bundled), which would swamp the recovery figure and the smoke run. So the entries are bundled
 * once per run with esbuild (tsx's own compiler), packages left external, into
 * `node_modules/.cache/terminus-bench/` (inside the repository, so packages resolve). If esbuild
 * is unavailable the entries run under tsx.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './root.js';

const ENTRIES = [
  'bench/servers/terminus.ts',
  'bench/baselines/sdk132-server.ts',
  'bench/servers/floor.ts',
  'bench/figures/memory-probe.ts',
  'bench/queues/run.ts',
  'bench/cluster/node.ts',
] as const;

const OUT = join(ROOT, 'node_modules/.cache/terminus-bench');
let bundled: Map<string, string> | null = null;

/** Bundles the entries; resolves with how they will run (`esbuild` or `tsx`). */
export async function prepareEntries(log: (line: string) => void): Promise<'esbuild' | 'tsx'> {
  try {
    const esbuild = await import('esbuild');
    mkdirSync(OUT, { recursive: true });
    await esbuild.build({
      entryPoints: ENTRIES.map((e) => join(ROOT, e)),
      outbase: ROOT,
      outdir: OUT,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'silent',
    });
    bundled = new Map(ENTRIES.map((e) => [e, join(OUT, e.replace(/\.ts$/, '.js'))]));
    return 'esbuild';
  } catch (error) {
    log(
      `esbuild bundling failed, running entries under tsx (${error instanceof Error ? error.message : String(error)})`,
    );
    bundled = null;
    return 'tsx';
  }
}

/** The node arguments that run `entry` (a path relative to the repository root). */
export function entryArgs(entry: string): string[] {
  const file = bundled?.get(entry);
  return file === undefined ? ['--import', 'tsx', entry] : [file];
}
