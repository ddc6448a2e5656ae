/**
 * Runs seeds across worker threads. Each worker gets an interleaved share of the seeds (worker i
 * takes every k-th), so slow seeds spread evenly; a range is handed over as a range, not a list.
 * Workers run JavaScript: from `dist/` the worker is `worker.js`; from sources (vitest, tsx) it is
 * `worker.ts`, loaded with tsx's import hook.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { FaultClass } from './faults.js';
import { seedCount, seedsOf, type Seeds } from './seeds.js';
import { runSeries } from './series.js';
import { summarize, type SeriesSummary } from './summary.js';
import type { SimWireName } from './wires/index.js';

export interface PoolOptions {
  readonly seeds: Seeds;
  readonly workers?: number;
  readonly faults?: readonly FaultClass[];
  /** The wire every series speaks; default the Tasks extension. */
  readonly wire?: SimWireName;
  readonly onSummary?: (summary: SeriesSummary, done: number) => void;
  /**
   * Keep every summary and return them sorted by seed (default true). A long run passes false and
   * folds each summary in `onSummary` instead: its memory then stays flat however many series run.
   */
  readonly collect?: boolean;
  /**
   * Stops the run: no series starts after it, worker threads are terminated, and the summaries of
   * the series cut short are never handed over (run them again). `runPool` then resolves.
   */
  readonly signal?: AbortSignal;
}

export async function runPool(options: PoolOptions): Promise<SeriesSummary[]> {
  const workers = Math.max(1, Math.min(options.workers ?? availableParallelism(), seedCount(options.seeds)));
  const results: SeriesSummary[] = [];
  const collect = options.collect ?? true;
  let done = 0;
  const take = (summary: SeriesSummary): void => {
    done++;
    if (collect) results.push(summary);
    options.onSummary?.(summary, done);
  };
  if (workers === 1) {
    for (const seed of seedsOf(options.seeds)) {
      if (options.signal?.aborted === true) break;
      take(
        summarize(
          await runSeries({
            seed,
            ...(options.faults === undefined ? {} : { faults: options.faults }),
            ...(options.wire === undefined ? {} : { wire: options.wire }),
          }),
        ),
      );
    }
    return results;
  }
  if (options.signal?.aborted === true) return results;
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url);
  const running = new Set<Worker>();
  const stop = (): void => {
    for (const worker of running) void worker.terminate();
  };
  options.signal?.addEventListener('abort', stop, { once: true });
  try {
    await Promise.all(
      Array.from(
        { length: workers },
        (_, share) =>
          new Promise<void>((resolve, reject) => {
            const workerData = {
              seeds: options.seeds,
              share,
              shares: workers,
              ...(options.faults === undefined ? {} : { faults: options.faults }),
              ...(options.wire === undefined ? {} : { wire: options.wire }),
            };
            const worker = fromSource
              ? new Worker(tsxBootstrap(entry), { eval: true, workerData })
              : new Worker(entry, { workerData });
            running.add(worker);
            worker.on('message', (summary: SeriesSummary) => {
              if (options.signal?.aborted !== true) take(summary);
            });
            worker.on('error', reject);
            worker.on('exit', (code) => {
              running.delete(worker);
              if (code === 0 || options.signal?.aborted === true) resolve();
              else reject(new Error(`sim worker exited with ${code}`));
            });
          }),
      ),
    );
  } finally {
    options.signal?.removeEventListener('abort', stop);
    stop();
  }
  return results.sort((a, b) => a.seed - b.seed);
}

/** A CommonJS bootstrap that registers tsx's ESM hook inside the worker, then imports the entry. */
function tsxBootstrap(entry: URL): string {
  const api = import.meta.resolve('tsx/esm/api');
  return `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
}
