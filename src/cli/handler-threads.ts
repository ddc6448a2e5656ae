import type { WorkerThreadsOptions } from '../runner/threads/pool.js';

/** The tool sets `terminus serve` and `terminus worker` pick between (`--fixtures`). */
export type ToolSet = 'demo' | 'conformance' | 'cluster';

/**
 * `--workers N`: the engine option that runs the chosen tool set's handlers in N worker threads.
 * Each thread imports the tool set's own module, as an author's tools module would be: the demo
 * and cluster sets are factories of the data folder, the conformance set a plain array. From the
 * sources (tsx) the modules are `.ts`, from `dist/` `.js`.
 */
export function handlerThreads(count: number, set: ToolSet, dataDir: string): { workers?: WorkerThreadsOptions } {
  if (count === 0) return {};
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const at = (path: string): URL => new URL(`../tools/${path}${ext}`, import.meta.url);
  switch (set) {
    case 'demo':
      return { workers: { count, module: at('demo/index'), export: 'demoTools', data: { dataDir } } };
    case 'cluster':
      return { workers: { count, module: at('cluster/index'), export: 'clusterTools', data: { dataDir } } };
    case 'conformance':
      return { workers: { count, module: at('conformance/index'), export: 'conformanceTools' } };
  }
}
