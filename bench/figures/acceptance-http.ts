/**
 * Figure 3, server side: the same completion-to-acceptance measure with the thin client over a
 * Streamable HTTP session (2025-11-25 wire) that opens the GET stream, where both servers push
 * `notifications/tasks/status` (our executor's HTTP channel does not open that stream, so these
 * rows show what the servers offer, not what our executor gets). Acceptance here is `tasks/result`
 * answered, with no ledger commit.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isTerminalStatus, getStatus, pool, submitTask, taskResult } from '../client/tasks.js';
import { withServer } from '../lib/proc.js';
import { fmt, type Row, type Target } from '../lib/report.js';
import { percentile, summarize, wallMs } from '../lib/stats.js';
import type { VariantId } from '../lib/variants.js';
import type { FigureContext, FigureResult } from './context.js';

const MODES = ['notifications', 'polling'] as const;
type Mode = (typeof MODES)[number];
const WIDTH = 4;

interface Run {
  readonly p50: number;
  readonly p99: number;
  /** Terminal notifications that arrived. */
  readonly pushed: number;
}

export async function runAcceptanceHttp(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const runnable = env.variants.filter((v) => v.notRun === undefined);
  const runs = new Map<string, Run[]>();
  const key = (variant: VariantId, mode: Mode): string => `${variant}/${mode}`;
  let counter = 0;

  for (let round = 0; round < config.rounds; round += 1) {
    for (const mode of MODES) {
      for (const variant of runnable) {
        ctx.log(`figure 3 (HTTP, thin client): round ${round + 1}/${config.rounds}, ${variant.id}, ${mode}`);
        counter += 1;
        const commitLog = join(env.dir, `commits-http-${counter}.jsonl`);
        const spec = env.spec(variant.id, {
          pollMs: config.pollMs,
          commitLog,
          ...(variant.id === 'B0' ? {} : { db: env.freshDb(variant.id, 'accept-http') }),
        });
        const run = await withServer(spec, 'http', async (server) => {
          const client = await server.connect({ listen: mode === 'notifications' });
          const terminal = new Map<string, () => void>();
          const seen = new Set<string>();
          let pushed = 0;
          client.onNotification((method, params) => {
            if (method !== 'notifications/tasks/status' || !isTerminalStatus(params.status)) return;
            const id = String(params.taskId);
            pushed += 1;
            seen.add(id);
            terminal.get(id)?.();
          });
          const accepted = new Map<string, number>();
          await pool(config.acceptanceTasks, WIDTH, async () => {
            const { taskId, pollInterval } = await submitTask(client, variant.taskTool, {
              ms: config.acceptanceTaskMs,
            });
            const interval = pollInterval ?? config.pollMs;
            // Notifications: wait for the push, polling as a fallback after the task should be long done.
            const pushedIn =
              mode === 'notifications'
                ? new Promise<void>((resolve) => {
                    if (seen.has(taskId)) resolve();
                    terminal.set(taskId, resolve);
                  })
                : null;
            const giveUp = performance.now() + config.acceptanceTaskMs + 3000;
            for (;;) {
              if (pushedIn !== null && performance.now() < giveUp) {
                const arrived = await Promise.race([
                  pushedIn.then(() => true),
                  new Promise<boolean>((resolve) => setTimeout(() => resolve(false), giveUp - performance.now())),
                ]);
                if (arrived) break;
                continue;
              }
              await new Promise((resolve) => setTimeout(resolve, interval));
              if (isTerminalStatus(await getStatus(client, taskId))) break;
            }
            await taskResult(client, taskId);
            accepted.set(taskId, wallMs());
            terminal.delete(taskId);
          });
          await client.close();
          return { accepted, pushed };
        });
        const commits = new Map<string, number>();
        for (const line of readFileSync(commitLog, 'utf8').split('\n')) {
          if (line === '') continue;
          const entry = JSON.parse(line) as { id: string; t: number };
          commits.set(entry.id, entry.t);
        }
        const latencies = [...run.accepted].flatMap(([id, t]) => {
          const committed = commits.get(id);
          return committed === undefined ? [] : [t - committed];
        });
        runs.set(key(variant.id, mode), [
          ...(runs.get(key(variant.id, mode)) ?? []),
          { p50: percentile(latencies, 50), p99: percentile(latencies, 99), pushed: run.pushed },
        ]);
      }
    }
  }

  const rows: Row[] = [];
  for (const mode of MODES) {
    for (const variant of env.variants) {
      const setting = `HTTP session, thin client, ${mode === 'notifications' ? 'GET-stream notifications' : 'polling only'}, poll ${config.pollMs} ms`;
      for (const quantile of ['p50', 'p99'] as const) {
        const metric = `commit -> tasks/result answered ${quantile} (ms)`;
        if (variant.notRun !== undefined) {
          rows.push({ figure: 3, metric, variant: variant.label, setting, notRun: variant.notRun });
          continue;
        }
        const all = runs.get(key(variant.id, mode)) ?? [];
        if (mode === 'notifications' && all.every((r) => r.pushed === 0)) {
          rows.push({
            figure: 3,
            metric,
            variant: variant.label,
            setting,
            notRun: 'no notifications/tasks/status on the GET stream',
          });
          continue;
        }
        rows.push({
          figure: 3,
          metric,
          variant: variant.label,
          setting,
          value: summarize(all.map((r) => r[quantile])),
          ...(mode === 'notifications'
            ? { note: `${summarize(all.map((r) => r.pushed)).median} of ${config.acceptanceTasks} pushed per run` }
            : {}),
        });
      }
    }
  }
  const ours = rows.find(
    (r) =>
      r.variant === env.variants.find((v) => v.id === 'sqlite')?.label &&
      r.metric.includes('p50') &&
      r.setting.includes('GET-stream'),
  );
  const measured = ours?.value?.median;
  const targets: Target[] = [
    {
      name: 'completion-to-acceptance with notifications, server side (SQLite, HTTP GET stream, thin client, p50)',
      goal: '< 20 ms',
      measured,
      unit: 'ms',
      met: measured === undefined ? false : measured < 20,
      margin:
        measured === undefined ? 'not measurable' : `${measured < 20 ? '+' : '-'}${fmt(Math.abs(20 - measured))} ms`,
      ...(measured === undefined ? { note: ours?.notRun ?? 'no row' } : {}),
    },
  ];
  return { rows, targets };
}
