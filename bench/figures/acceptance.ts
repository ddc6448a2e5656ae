/**
 * Figure 3: completion-to-acceptance, from the server's terminal commit (logged by the server when
 * the write resolved) to the executor's receipt (`result()` resolved: the receipt is committed in
 * its SQLite ledger). Our executor over loopback Streamable HTTP on the wire it negotiates (ours:
 * the Tasks extension, listening with `subscriptions/listen`; B0: 2025-11-25, listening on the
 * session's GET stream); once listening (pushes bring the status read forward), once polling only,
 * in the same run. Both clocks are the host's wall clock with sub-millisecond resolution; the load
 * average over the runs is reported beside the figure, since the machine may be shared.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { newWireStats, openExecutor } from '../client/executor.js';
import { pool } from '../client/tasks.js';
import { BENCH_HEADERS, startServer } from '../lib/proc.js';
import { fmt, type Row, type Target } from '../lib/report.js';
import { percentile, summarize, wallMs } from '../lib/stats.js';
import type { VariantId } from '../lib/variants.js';
import type { FigureContext, FigureResult } from './context.js';

const MODES = ['notifications', 'polling'] as const;
type Mode = (typeof MODES)[number];
/** Tasks in flight at once: few enough that the QPS cap never delays a poll or a fetch. */
const WIDTH = 4;

interface Run {
  readonly p50: number;
  readonly p99: number;
  readonly hints: number;
  /** 1-minute load average at the end of the run. */
  readonly load: number;
}

function readCommits(path: string): Map<string, number> {
  const commits = new Map<string, number>();
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return commits;
  }
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const entry = JSON.parse(line) as { id: string; t: number };
    commits.set(entry.id, entry.t);
  }
  return commits;
}

export async function runAcceptance(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const runnable = env.variants.filter((v) => v.notRun === undefined);
  const runs = new Map<string, Run[]>();
  const key = (variant: VariantId, mode: Mode): string => `${variant}/${mode}`;
  let counter = 0;

  for (let round = 0; round < config.rounds; round += 1) {
    for (const mode of MODES) {
      for (const variant of runnable) {
        ctx.log(`figure 3: round ${round + 1}/${config.rounds}, ${variant.id}, ${mode}`);
        counter += 1;
        const commitLog = join(env.dir, `commits-${counter}.jsonl`);
        const spec = env.spec(variant.id, {
          pollMs: config.pollMs,
          commitLog,
          ...(variant.id === 'B0' ? {} : { db: env.freshDb(variant.id, 'accept') }),
        });
        const stats = newWireStats();
        const server = await startServer(spec, 'http');
        const accepted = new Map<string, number>();
        try {
          const bench = await openExecutor({
            target: { url: server.url!, headers: BENCH_HEADERS },
            wire: 'auto',
            ledgerPath: join(env.dir, `ledger-accept-${counter}.db`),
            stats,
            hints: mode === 'notifications',
            qps: 10_000,
          });
          try {
            await pool(config.acceptanceTasks, WIDTH, async (i) => {
              const handle = await bench.executor.submit({
                callNodeId: `accept-${counter}-${i}`,
                server: 'bench',
                tool: variant.taskTool,
                args: { ms: config.acceptanceTaskMs },
              });
              const receipt = await handle.result();
              accepted.set(receipt.taskId, wallMs());
            });
          } finally {
            await bench.close();
          }
        } finally {
          await server.stop();
        }
        const commits = readCommits(commitLog);
        const latencies = [...accepted].flatMap(([id, t]) => {
          const committed = commits.get(id);
          return committed === undefined ? [] : [t - committed];
        });
        runs.set(key(variant.id, mode), [
          ...(runs.get(key(variant.id, mode)) ?? []),
          {
            p50: percentile(latencies, 50),
            p99: percentile(latencies, 99),
            hints: stats.hints,
            load: loadavg()[0] ?? 0,
          },
        ]);
      }
    }
  }

  const rows: Row[] = [];
  const targets: Target[] = [];
  for (const mode of MODES) {
    for (const variant of env.variants) {
      const wire = variant.id === 'B0' ? '2025-11-25 wire, GET stream' : 'Tasks extension, subscriptions/listen';
      const setting = `loopback HTTP, our executor, ${mode === 'notifications' ? `listening (${wire}) + polling` : 'polling only'}, poll ${config.pollMs} ms hint`;
      for (const quantile of ['p50', 'p99'] as const) {
        const metric = `commit -> receipt ${quantile} (ms)`;
        if (variant.notRun !== undefined) {
          rows.push({ figure: 3, metric, variant: variant.label, setting, notRun: variant.notRun });
          continue;
        }
        const all = runs.get(key(variant.id, mode)) ?? [];
        if (mode === 'notifications' && all.every((r) => r.hints === 0)) {
          rows.push({
            figure: 3,
            metric,
            variant: variant.label,
            setting,
            notRun: variant.id === 'B0' ? 'no notifications/tasks/status arrived' : 'no notifications/tasks arrived',
          });
          continue;
        }
        const value = summarize(all.map((r) => r[quantile]));
        rows.push({
          figure: 3,
          metric,
          variant: variant.label,
          setting,
          value,
          note: `${mode === 'notifications' ? `${fmt(summarize(all.map((r) => r.hints)).median)} hints per run, ` : ''}load ${fmt(summarize(all.map((r) => r.load)).median)}`,
        });
      }
    }
  }
  const ours = rows.find(
    (r) =>
      r.figure === 3 &&
      r.variant === env.variants[1]?.label &&
      r.metric.includes('p50') &&
      r.setting.includes('listening'),
  );
  const measured = ours?.value?.median;
  targets.push({
    name: 'completion-to-acceptance with notifications (SQLite, p50)',
    goal: '< 20 ms',
    measured,
    unit: 'ms',
    met: measured === undefined ? false : measured < 20,
    margin:
      measured === undefined ? 'not measurable' : `${measured < 20 ? '+' : '-'}${fmt(Math.abs(20 - measured))} ms`,
    ...(measured === undefined ? { note: ours?.notRun ?? 'no row' } : {}),
  });
  return { rows, targets };
}
