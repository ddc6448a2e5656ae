import { InvalidArgumentError } from 'commander';
import type { WorkerThreadsOptions } from '../runner/threads/pool.js';

/** The tool sets `terminus serve` and `terminus worker` pick between (`--fixtures`). */
export type ToolSet = 'demo' | 'conformance' | 'cluster';

/**
 * `--workers N` (`--workers-nice K`): the engine option that runs the chosen tool set's handlers in
 * N worker threads (reniced to K on Linux).
 * Each thread imports the tool set's own module, as an author's tools module would be: the demo
 * and cluster sets are factories of the data folder, the conformance set a plain array. From the
 * sources (tsx) the modules are `.ts`, from `dist/` `.js`.
 */
export function handlerThreads(
  count: number,
  set: ToolSet,
  dataDir: string,
  nice = 0,
): { workers?: WorkerThreadsOptions } {
  if (count === 0) return {};
  const workers = pick(count, set, dataDir);
  return { workers: nice === 0 ? workers : { ...workers, nice } };
}

function pick(count: number, set: ToolSet, dataDir: string): WorkerThreadsOptions {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const at = (path: string): URL => new URL(`../tools/${path}${ext}`, import.meta.url);
  switch (set) {
    case 'demo':
      return { count, module: at('demo/index'), export: 'demoTools', data: { dataDir } };
    case 'cluster':
      return { count, module: at('cluster/index'), export: 'clusterTools', data: { dataDir } };
    case 'conformance':
      return { count, module: at('conformance/index'), export: 'conformanceTools' };
  }
}

/** `--workers-nice`: a nice value a thread may take without privileges. */
export function parseNice(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 19) throw new InvalidArgumentError('not a whole number from 0 to 19');
  return n;
}
