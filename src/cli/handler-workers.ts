import { InvalidArgumentError, type Command } from 'commander';
import type { EngineOptions } from '../runner/options.js';
import type { WorkersOptions } from '../runner/workers/pool.js';

/** The tool sets `terminus serve` and `terminus worker` pick between (`--fixtures`). */
export type ToolSet = 'demo' | 'conformance' | 'cluster' | 'hostile';

/** The flags `addWorkerOptions` adds. */
export interface WorkerFlags {
  /** Worker processes running the tool handlers; 0: on the serving thread. */
  readonly workers: number;
  /** Their nice value. */
  readonly workersNice: number;
  readonly workerHeapMb?: number;
  readonly workerMemoryMb?: number;
  readonly abortGraceMs: number;
}

/**
 * `--workers N` and its limits, the same on `terminus serve` and `terminus worker`: `where` names
 * the thread handlers run on without workers.
 */
export function addWorkerOptions(command: Command, where: string): Command {
  return command
    .option(
      '--workers <n>',
      `run tool handlers in n worker processes, one task each at a time (0: on the ${where})`,
      whole(0),
      0,
    )
    .option(
      '--workers-nice <n>',
      `nice value (0-19) of the --workers processes, so the ${where} is scheduled first`,
      parseNice,
      0,
    )
    .option(
      '--worker-heap-mb <mb>',
      "JS heap limit of each --workers process (default: a quarter of this machine's memory shared by them, 256-2048)",
      whole(16),
    )
    .option(
      '--worker-memory-mb <mb>',
      'Linux: resident memory limit of each --workers process, Buffers included (default: twice the heap, at least heap + 256)',
      whole(32),
    )
    .option(
      '--abort-grace-ms <ms>',
      'how long a cancelled or stopping handler has to return before its worker is killed (on the serving thread: given up)',
      whole(1),
      10_000,
    );
}

/**
 * A worker flag given without `--workers`: one line naming it and exit 2, before anything opens
 * (a refused start leaves no database file behind).
 */
export function checkWorkerFlags(flags: WorkerFlags): void {
  if (flags.workers > 0) return;
  const given = [
    flags.workerHeapMb === undefined ? null : '--worker-heap-mb',
    flags.workerMemoryMb === undefined ? null : '--worker-memory-mb',
    flags.workersNice === 0 ? null : '--workers-nice',
  ].filter((flag) => flag !== null);
  if (given.length === 0) return;
  const verb = given.length === 1 ? 'applies' : 'apply';
  process.stderr.write(`terminus: ${given.join(' and ')} ${verb} to worker processes: add --workers N\n`);
  process.exit(2);
}

/**
 * The engine options of the worker flags: `workers` for the chosen tool set's own module (the demo
 * and cluster sets are factories of the data folder, the conformance and hostile sets plain arrays;
 * from the sources (tsx) the modules are `.ts`, from `dist/` `.js`), the workers' output on this
 * stderr, and the grace.
 */
export function workerEngineOptions(flags: WorkerFlags, set: ToolSet, dataDir: string): Partial<EngineOptions> {
  const grace = { abortGraceMs: flags.abortGraceMs };
  if (flags.workers === 0) return grace;
  const workers: WorkersOptions = {
    ...pick(flags.workers, set, dataDir),
    ...(flags.workersNice === 0 ? {} : { nice: flags.workersNice }),
    ...(flags.workerHeapMb === undefined ? {} : { heapMb: flags.workerHeapMb }),
    ...(flags.workerMemoryMb === undefined ? {} : { memoryMb: flags.workerMemoryMb }),
    output: (chunk) => void process.stderr.write(chunk),
  };
  return { ...grace, workers };
}

function pick(count: number, set: ToolSet, dataDir: string): WorkersOptions {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const at = (path: string): URL => new URL(`../tools/${path}${ext}`, import.meta.url);
  switch (set) {
    case 'demo':
      return { count, module: at('demo/index'), export: 'demoTools', data: { dataDir } };
    case 'cluster':
      return { count, module: at('cluster/index'), export: 'clusterTools', data: { dataDir } };
    case 'conformance':
      return { count, module: at('conformance/index'), export: 'conformanceTools' };
    case 'hostile':
      return { count, module: at('hostile/index'), export: 'hostileTools' };
  }
}

/** `--workers-nice`: a nice value a process may take without privileges. */
export function parseNice(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 19) throw new InvalidArgumentError('not a whole number from 0 to 19');
  return n;
}

function whole(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`not a whole number of at least ${min}`);
    return n;
  };
}
