/**
 * Figure 7: `kill -9` of the server with N tasks in flight (acknowledged, the first 256 running a
 * long sleep, the rest queued), then a new process on the same database: the time from the restart until
 * every task answers `tasks/get` with its status at the kill (`working`), and how many are lost
 * (B0: all of them, its store was in the dead process).
 */
import { RpcError } from '../client/rpc.js';
import { getStatus, pool, submitTask } from '../client/tasks.js';
import { startServer, withServer, type ServerSpec } from '../lib/proc.js';
import { openStore, seedOpenTasks } from '../lib/seed.js';
import { fmt, type Row, type Target } from '../lib/report.js';
import { summarize } from '../lib/stats.js';
import type { VariantId } from '../lib/variants.js';
import type { FigureContext, FigureResult } from './context.js';

const WIDTH = 16;
/** Give up on a task that is not back after this long (and count it lost). */
const DEADLINE_MS = 60_000;

interface Recovery {
  readonly ms: number;
  readonly startMs: number;
  readonly lost: number;
}

/**
 * Ours: the tasks are created through the store API (as if submitted over stdio), then a server
 * starts on the database and its runner claims and runs them for a moment before the kill. B0 has
 * no store to seed: they are submitted over its wire.
 */
async function putInFlight(
  ctx: FigureContext,
  spec: ServerSpec,
  variant: VariantId,
  size: number,
  tool: string,
): Promise<string[]> {
  let ids: string[] = [];
  if (variant !== 'B0') {
    const db = spec.args[spec.args.indexOf('--db') + 1]!;
    const schema = spec.args.includes('--schema') ? spec.args[spec.args.indexOf('--schema') + 1]! : '';
    const store = await openStore(
      db.startsWith('postgres') ? { kind: 'postgres', url: db, schema } : { kind: 'sqlite', path: db },
    );
    ids = await seedOpenTasks(store, size, { tool, args: { ms: 3_600_000 }, owner: 'stdio' });
    await store.close();
  }
  const first = await startServer(spec, 'stdio');
  try {
    const client = await first.connect();
    if (variant === 'B0') {
      await pool(size, WIDTH, async () => {
        ids.push((await submitTask(client, tool, { ms: 3_600_000 })).taskId);
      });
    } else {
      // Let the runner claim its first batch (concurrency 256) and start running them.
      await getStatus(client, ids[0]!);
      await new Promise((resolve) => setTimeout(resolve, ctx.config.quick ? 200 : 1000));
    }
  } finally {
    await first.kill9();
  }
  return ids;
}

export async function runRecovery(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const runnable = env.variants.filter((v) => v.notRun === undefined);
  const results = new Map<string, Recovery[]>();
  const key = (variant: VariantId, size: number): string => `${variant}/${size}`;

  for (let round = 0; round < config.recoveryRounds; round += 1) {
    for (const size of config.recovery) {
      for (const variant of runnable) {
        ctx.log(`figure 7: ${size} in flight, round ${round + 1}/${config.recoveryRounds}, ${variant.id}`);
        const spec = env.spec(variant.id, {
          pollMs: config.pollMs,
          ...(variant.id === 'B0' ? {} : { db: env.freshDb(variant.id, 'recovery') }),
        });
        const ids = await putInFlight(ctx, spec, variant.id, size, variant.taskTool);
        const start = performance.now();
        const result = await withServer(spec, 'stdio', async (second) => {
          const client = await second.connect();
          const startMs = performance.now() - start;
          let lost = 0;
          await pool(ids.length, WIDTH, async (i) => {
            for (;;) {
              try {
                if ((await getStatus(client, ids[i]!)) === 'working') return;
              } catch (error) {
                // -32602: not found. B0 lost it for good; ours would only say so for a lost commit.
                if (!(error instanceof RpcError) || error.code !== -32602 || variant.id === 'B0') {
                  lost += 1;
                  return;
                }
              }
              if (performance.now() - start > DEADLINE_MS) {
                lost += 1;
                return;
              }
              await new Promise((resolve) => setTimeout(resolve, 10));
            }
          });
          await client.close();
          return { ms: performance.now() - start, startMs, lost };
        });
        results.set(key(variant.id, size), [...(results.get(key(variant.id, size)) ?? []), result]);
      }
    }
  }

  const rows: Row[] = [];
  const targets: Target[] = [];
  for (const size of config.recovery) {
    for (const variant of env.variants) {
      const setting = `${size.toLocaleString('en-US')} in flight, stdio`;
      if (variant.notRun !== undefined) {
        rows.push({
          figure: 7,
          metric: 'time until all pollable (ms)',
          variant: variant.label,
          setting,
          notRun: variant.notRun,
        });
        continue;
      }
      const all = results.get(key(variant.id, size)) ?? [];
      const lost = summarize(all.map((r) => r.lost));
      if (variant.id === 'B0') {
        rows.push({
          figure: 7,
          metric: 'tasks lost',
          variant: variant.label,
          setting,
          value: lost,
          note: `of ${size}: the store died with the process`,
        });
        continue;
      }
      const time = summarize(all.map((r) => r.ms));
      const startup = summarize(all.map((r) => r.startMs));
      rows.push({
        figure: 7,
        metric: 'time until all pollable (ms)',
        variant: variant.label,
        setting,
        value: time,
        note: `process start + initialize ${fmt(startup.median)} ms of it; lost: ${fmt(lost.median)}`,
      });
      if (variant.id === 'sqlite' && size === Math.max(...config.recovery)) {
        const seconds = time.median / 1000;
        targets.push({
          name: `recovery of ${size.toLocaleString('en-US')} in flight (SQLite)`,
          goal: '< 5 s, none lost',
          measured: seconds,
          unit: 's',
          met: seconds < 5 && lost.max === 0,
          margin: `${seconds < 5 ? '+' : '-'}${fmt(Math.abs(5 - seconds))} s; lost ${fmt(lost.max)}`,
        });
      }
    }
  }
  return { rows, targets };
}
