import type { BenchConfig } from '../lib/config.js';
import type { Pinning } from '../lib/pin.js';
import type { Row, Target } from '../lib/report.js';
import type { BenchEnv } from '../lib/variants.js';

/** What every figure gets: the sizes, the variants and their servers, the fsync ceiling. */
export interface FigureContext {
  readonly config: BenchConfig;
  readonly env: BenchEnv;
  /** Median fsyncs per second of the databases' disk, measured at the start of the run. */
  readonly fsyncPerSecond: number;
  /** Where servers under load and the load generator run (taskset), or that they share the cores. */
  readonly pinning: Pinning;
  /** `wrk`'s version when HTTP bursts use it (`bench/lib/wrk.ts`); undefined: the harness's Node clients. */
  readonly wrk: string | undefined;
  log(line: string): void;
}

export interface FigureResult {
  readonly rows: Row[];
  readonly targets: Target[];
}
