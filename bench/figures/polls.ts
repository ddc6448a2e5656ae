/**
 * Figure 4: polls per task over a lognormal mix of durations, against the ideal, and the peak poll
 * rate against the executor's QPS cap. Our executor against ours on SQLite over HTTP (the wire it
 * negotiates: the Tasks extension), tasks arriving at a steady seeded rate. The ideal client polls
 * exactly every effective interval (the server's hint, clamped to the executor's 250 ms floor)
 * from the acknowledgement until the tool's run is over: max(1, ceil(duration / interval)).
 */
import { join } from 'node:path';
import { DEFAULT_POLICY } from '../../src/executor/operation.js';
import { newWireStats, openExecutor } from '../client/executor.js';
import { BENCH_HEADERS, withServer } from '../lib/proc.js';
import { fmt, type Row, type Target } from '../lib/report.js';
import { lognormal, seededRandom, summarize } from '../lib/stats.js';
import type { FigureContext, FigureResult } from './context.js';
import { pollCostRows } from './poll-cost.js';

/** Longest task of the mix: the lognormal tail is cut here so a run stays bounded. */
const MAX_TASK_MS = 10_000;

interface Run {
  readonly ratio: number;
  readonly polls: number;
  readonly ideal: number;
  readonly peakPolls: number;
  readonly peakRequests: number;
}

/** Most events inside any 1 s window. */
function peakPerSecond(times: readonly number[]): number {
  const xs = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < xs.length; hi += 1) {
    while (xs[hi]! - xs[lo]! >= 1000) lo += 1;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

export async function runPolls(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const sqlite = env.variants.find((v) => v.id === 'sqlite')!;
  const interval = Math.min(
    DEFAULT_POLICY.maxPollIntervalMs,
    Math.max(DEFAULT_POLICY.minPollIntervalMs, config.pollMs),
  );
  const random = seededRandom(config.seed);
  const durations = Array.from({ length: config.pollTasks }, () =>
    Math.min(MAX_TASK_MS, Math.round(lognormal(random, config.pollMedianMs, config.pollSigma))),
  );
  // Arrivals spaced so the demand (tasks in flight x polls per second) stays near half the cap.
  const meanMs = durations.reduce((a, b) => a + b, 0) / durations.length;
  const arrivalGapMs = Math.max(5, (meanMs / interval) * (1000 / (config.qps / 2)));
  const runs: Run[] = [];

  for (let round = 0; round < config.rounds; round += 1) {
    ctx.log(
      `figure 4: round ${round + 1}/${config.rounds}, ${config.pollTasks} tasks, one every ${fmt(arrivalGapMs)} ms`,
    );
    const spec = env.spec('sqlite', { pollMs: config.pollMs, db: env.freshDb('sqlite', 'polls') });
    const run = await withServer(spec, 'http', async (server) => {
      const stats = newWireStats();
      const bench = await openExecutor({
        target: { url: server.url!, headers: BENCH_HEADERS },
        wire: 'auto',
        ledgerPath: join(env.dir, `ledger-polls-${round}.db`),
        stats,
        hints: true,
        qps: config.qps,
      });
      const acked = new Map<string, number>();
      try {
        const jobs = durations.map(async (ms, i) => {
          await new Promise((resolve) => setTimeout(resolve, i * arrivalGapMs));
          const handle = await bench.executor.submit({
            callNodeId: `polls-${round}-${i}`,
            server: 'bench',
            tool: sqlite.taskTool,
            args: { ms },
          });
          const receipt = await handle.result();
          acked.set(receipt.taskId, ms);
        });
        await Promise.all(jobs);
      } finally {
        await bench.close();
      }
      return { stats, acked };
    });
    let polls = 0;
    let ideal = 0;
    for (const [taskId, ms] of run.acked) {
      polls += run.stats.polls.get(taskId) ?? 0;
      ideal += Math.max(1, Math.ceil(ms / interval));
    }
    runs.push({
      ratio: polls / ideal,
      polls: polls / run.acked.size,
      ideal: ideal / run.acked.size,
      peakPolls: peakPerSecond(run.stats.pollTimes),
      peakRequests: peakPerSecond(run.stats.requestTimes),
    });
  }

  const label = `${sqlite.label}, our executor`;
  const setting = `HTTP, ${config.pollTasks} tasks, lognormal median ${config.pollMedianMs} ms sigma ${config.pollSigma}, interval ${interval} ms, cap ${config.qps} QPS`;
  const ratio = summarize(runs.map((r) => r.ratio));
  const peakRequests = summarize(runs.map((r) => r.peakRequests));
  const rows: Row[] = [
    { figure: 4, metric: 'polls per task', variant: label, setting, value: summarize(runs.map((r) => r.polls)) },
    {
      figure: 4,
      metric: 'ideal polls per task',
      variant: 'ideal client',
      setting,
      value: summarize(runs.map((r) => r.ideal)),
    },
    {
      figure: 4,
      metric: 'polls per task / ideal',
      variant: label,
      setting,
      value: ratio,
      ratio: { to: 'ideal', value: ratio.median },
    },
    {
      figure: 4,
      metric: 'peak polls/s (1 s window)',
      variant: label,
      setting,
      value: summarize(runs.map((r) => r.peakPolls)),
    },
    {
      figure: 4,
      metric: 'peak requests/s, all kinds (1 s window)',
      variant: label,
      setting,
      value: peakRequests,
      ratio: { to: 'QPS cap', value: peakRequests.max / config.qps },
      note: `cap ${config.qps}/s; the ratio is of the worst round`,
    },
  ];
  const targets: Target[] = [
    {
      name: 'polls per task vs ideal',
      goal: 'within 1.2x',
      measured: ratio.median,
      unit: 'x ideal',
      met: ratio.median <= 1.2,
      margin: `${ratio.median <= 1.2 ? '+' : '-'}${fmt(Math.abs(1.2 - ratio.median))}x`,
    },
    {
      name: 'peak request rate vs QPS cap',
      goal: `<= ${config.qps}/s (+1 burst token)`,
      measured: peakRequests.max,
      unit: 'req/s',
      met: peakRequests.max <= config.qps + 1,
      margin: `${fmt(config.qps + 1 - peakRequests.max)}/s of headroom`,
    },
  ];
  return { rows: [...rows, ...pollCostRows()], targets };
}
