/**
 * `npm run bench [-- --quick] [-- --json]`: every variant on loopback HTTP or stdio with the same
 * seeded workload, rounds interleaved (A B C A B C ...), a markdown table of medians and ranges (or
 * JSON) on stdout, progress on stderr. See docs/benchmarks.md for what each figure means.
 */
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseConfig, type BenchConfig, type FigureId } from './lib/config.js';
import { prepareEntries } from './lib/entries.js';
import { describeMachine, fsyncRate } from './lib/machine.js';
import { renderMarkdown, type BenchReport, type Row, type Target } from './lib/report.js';
import { detectPinning, withPinnedLoad } from './lib/pin.js';
import { wrkVersion } from './lib/wrk.js';
import { FLOOR_FIGURES, isFloor, openBenchEnv } from './lib/variants.js';
import type { FigureContext, FigureResult } from './figures/context.js';
import { runAcceptanceHttp } from './figures/acceptance-http.js';
import { runAcceptance } from './figures/acceptance.js';
import { runClaim } from './figures/claim.js';
import { runCluster } from './figures/cluster.js';
import { runCommits } from './figures/commits.js';
import { runGetLatency } from './figures/get-latency.js';
import { runHandlerThreads } from './figures/handler-threads.js';
import { runMemory } from './figures/memory.js';
import { runPolls } from './figures/polls.js';
import { runQueues } from './figures/queues.js';
import { runRecovery } from './figures/recovery.js';
import { runSubmissions } from './figures/submissions.js';
import { runTaskGets } from './figures/task-get.js';

type FigureRunner = (ctx: FigureContext) => Promise<FigureResult>;

/**
 * Figures 1 and 5 share their server processes. `pinned`: the figure drives a server with a load
 * from this process, so with pinning the two get separate cores (`bench/lib/pin.ts`).
 */
const RUNNERS: readonly {
  readonly figures: readonly FigureId[];
  readonly run: FigureRunner;
  readonly pinned?: true;
}[] = [
  { figures: [1, 5], run: runSubmissions, pinned: true },
  { figures: [2], run: runGetLatency },
  { figures: [3], run: runAcceptance },
  { figures: [3], run: runAcceptanceHttp },
  { figures: [4], run: runPolls },
  { figures: [6], run: runMemory },
  { figures: [7], run: runRecovery },
  { figures: [8], run: runTaskGets, pinned: true },
  { figures: [9], run: runClaim },
  { figures: [10], run: runHandlerThreads },
  { figures: [11], run: runCommits },
  { figures: [12], run: runQueues },
  { figures: [13], run: runCluster },
];

export async function runBench(config: BenchConfig, log: (line: string) => void): Promise<BenchReport> {
  const started = performance.now();
  const loadAtStart = loadavg()[0] ?? NaN;
  const runner = await prepareEntries(log);
  const env = await openBenchEnv({ noPostgres: config.noPostgres, log });
  try {
    const rates = fsyncRate(env.dir, config.quick ? 100 : 1000, config.quick ? 1 : 3);
    const pinning = detectPinning();
    const wrk = config.noWrk ? undefined : wrkVersion();
    const httpLoad =
      wrk === undefined
        ? `HTTP loads (figure 1's submissions, figure 8's 16-client reads): the harness's Node clients (${config.noWrk ? '--no-wrk' : 'no wrk on the PATH: apt-get install wrk'}), which cap every server near the same rate`
        : `HTTP loads (figure 1's submissions, figure 8's 16-client reads): ${wrk} (C), one connection per client for ${config.wrkSeconds} s, every answer checked`;
    const machine = { ...describeMachine(rates), processes: runner, load: `${pinning.description}; ${httpLoad}` };
    const ctx: FigureContext = { config, env, fsyncPerSecond: machine.fsyncPerSecond.median, pinning, wrk, log };
    const rows: Row[] = [];
    const targets: Target[] = [];
    const figureSeconds: { figures: string; seconds: number }[] = [];
    for (const runner of RUNNERS) {
      if (!runner.figures.some((f) => config.figures.includes(f))) continue;
      const floored = runner.figures.every((f) => FLOOR_FIGURES.includes(f));
      const variants = floored ? env.variants : env.variants.filter((v) => !isFloor(v.id));
      const figureStart = performance.now();
      const figureCtx = { ...ctx, env: { ...env, variants } };
      const result = await (runner.pinned === true
        ? withPinnedLoad(pinning, () => runner.run(figureCtx))
        : runner.run(figureCtx));
      const seconds = (performance.now() - figureStart) / 1000;
      figureSeconds.push({ figures: runner.figures.join('+'), seconds });
      ctx.log(`figure ${runner.figures.join('+')} took ${seconds.toFixed(0)} s`);
      rows.push(...result.rows.filter((r) => config.figures.includes(r.figure as FigureId)));
      targets.push(...result.targets);
    }
    rows.sort((a, b) => a.figure - b.figure);
    return {
      command: config.command,
      machine: { ...machine, loadAverage: { start: loadAtStart, end: loadavg()[0] ?? NaN } },
      rounds: config.rounds,
      quick: config.quick,
      rows,
      targets,
      durationSeconds: (performance.now() - started) / 1000,
      figureSeconds,
    };
  } finally {
    await env.close();
  }
}

async function main(): Promise<void> {
  const config = parseConfig(process.argv.slice(2));
  const report = await runBench(config, (line) => process.stderr.write(`bench: ${line}\n`));
  process.stdout.write(config.json ? `${JSON.stringify(report, null, 2)}\n` : renderMarkdown(report));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(
        `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
