/**
 * Figure 2: `tasks/get` latency (client-side round trip over stdio, one call at a time) with 1,000 /
 * 10,000 / 100,000 open tasks in the store. Ours: the database is seeded once per size through the
 * store API and reused by every round; B0: `InMemoryTaskStore.createTask` in the server process
 * before it serves. The client then creates a few tasks of its own and reads them round-robin.
 *
 * Issue 14: at the largest size the same process then serves a client polling one task every
 * `pollEveryMs` (5 ms) for `polledGets` reads, the shape of a real poller, whose p99 shows the
 * event loop held by background work (the runner's claim every 250 ms, heartbeats, commits).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { getStatus, submitTask } from '../client/tasks.js';
import { withServer } from '../lib/proc.js';
import { fmt, ratioTarget, type Row, type Target } from '../lib/report.js';
import { percentile, summarize } from '../lib/stats.js';
import { openStore, seedOpenTasks } from '../lib/seed.js';
import { isFloor, type Database, type VariantId } from '../lib/variants.js';
import type { FigureContext, FigureResult } from './context.js';

const OWN_TASKS = 16;

export async function runGetLatency(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const runnable = env.variants.filter((v) => v.notRun === undefined);
  const samples = new Map<string, { p50: number[]; p99: number[]; polledP99: number[] }>();
  const key = (variant: VariantId, size: number): string => `${variant}/${size}`;
  const largest = Math.max(...config.openTasks);

  for (const size of config.openTasks) {
    const databases = new Map<VariantId, Database>();
    for (const variant of runnable) {
      // B0 and the floor seed their own stores in-process (`--seed`).
      if (variant.id === 'B0' || isFloor(variant.id)) continue;
      const db = env.freshDb(variant.id, `open-${size}`);
      ctx.log(`figure 2: seeding ${size} open tasks into ${variant.id}`);
      const store = await openStore(db);
      await seedOpenTasks(store, size);
      await store.close();
      databases.set(variant.id, db);
    }
    for (let round = 0; round < config.rounds; round += 1) {
      for (const variant of runnable) {
        ctx.log(`figure 2: ${size} open, round ${round + 1}/${config.rounds}, ${variant.id}`);
        const db = isFloor(variant.id) ? env.freshDb(variant.id, `open-${size}`) : databases.get(variant.id);
        const spec = env.spec(variant.id, { pollMs: config.pollMs, seed: size, ...(db === undefined ? {} : { db }) });
        const { latencies, polled } = await withServer(spec, 'stdio', async (server) => {
          const client = await server.connect();
          // Open tasks of our own (a long sleep), read round-robin: the lookups walk the full store.
          const own: string[] = [];
          for (let i = 0; i < OWN_TASKS; i += 1)
            own.push((await submitTask(client, variant.taskTool, { ms: 3_600_000 })).taskId);
          const times: number[] = [];
          const warmup = Math.min(100, config.gets);
          for (let i = 0; i < warmup + config.gets; i += 1) {
            const start = performance.now();
            await getStatus(client, own[i % own.length]!);
            if (i >= warmup) times.push(performance.now() - start);
          }
          const polledTimes: number[] = [];
          for (let i = 0; size === largest && i < config.polledGets; i += 1) {
            await sleep(config.pollEveryMs);
            const start = performance.now();
            await getStatus(client, own[0]!);
            polledTimes.push(performance.now() - start);
          }
          await client.close();
          return { latencies: times, polled: polledTimes };
        });
        const entry = samples.get(key(variant.id, size)) ?? { p50: [], p99: [], polledP99: [] };
        entry.p50.push(percentile(latencies, 50));
        entry.p99.push(percentile(latencies, 99));
        if (polled.length > 0) entry.polledP99.push(percentile(polled, 99));
        samples.set(key(variant.id, size), entry);
      }
    }
  }

  const rows: Row[] = [];
  const targets: Target[] = [];
  for (const size of config.openTasks) {
    for (const quantile of ['p50', 'p99'] as const) {
      const b0 = summarize(samples.get(key('B0', size))?.[quantile] ?? []);
      for (const variant of env.variants) {
        const metric = `tasks/get ${quantile} (ms)`;
        const setting = `${size.toLocaleString('en-US')} open, stdio`;
        if (variant.notRun !== undefined) {
          rows.push({ figure: 2, metric, variant: variant.label, setting, notRun: variant.notRun });
          continue;
        }
        const value = summarize(samples.get(key(variant.id, size))?.[quantile] ?? []);
        const ratio = value.median / b0.median;
        rows.push({
          figure: 2,
          metric,
          variant: variant.label,
          setting,
          value,
          ...(variant.id === 'B0' ? {} : { ratio: { to: 'B0', value: ratio } }),
        });
        if (variant.id === 'sqlite' && quantile === 'p99' && size === largest) {
          targets.push({
            name: `tasks/get p99 at ${size.toLocaleString('en-US')} open (SQLite)`,
            goal: 'within 2x of B0',
            measured: ratio,
            unit: 'x B0',
            met: ratio <= 2,
            margin: `${ratio <= 2 ? '+' : '-'}${fmt(Math.abs(2 - ratio))}x (${fmt(value.median)} vs ${fmt(b0.median)} ms)`,
          });
        }
      }
    }
  }
  const polledMetric = `tasks/get p99, polled every ${config.pollEveryMs} ms (ms)`;
  const polledSetting = `${largest.toLocaleString('en-US')} open, stdio, ${config.polledGets} reads`;
  const b0 = summarize(samples.get(key('B0', largest))?.polledP99 ?? []);
  for (const variant of env.variants) {
    if (variant.notRun !== undefined) {
      rows.push({
        figure: 2,
        metric: polledMetric,
        variant: variant.label,
        setting: polledSetting,
        notRun: variant.notRun,
      });
    } else {
      const value = summarize(samples.get(key(variant.id, largest))?.polledP99 ?? []);
      rows.push({
        figure: 2,
        metric: polledMetric,
        variant: variant.label,
        setting: polledSetting,
        value,
        ...(variant.id === 'B0' ? {} : { ratio: { to: 'B0', value: value.median / b0.median } }),
      });
    }
    if (variant.id === 'sqlite' || variant.id === 'postgres') {
      const value = summarize(samples.get(key(variant.id, largest))?.polledP99 ?? []);
      // On PostgreSQL the limit that binds is the floor on the same server, measured beside.
      const floor = summarize(samples.get(key('floor-pg', largest))?.polledP99 ?? []).median;
      const limit =
        variant.id === 'postgres' && Number.isFinite(floor)
          ? `; the floor on PostgreSQL: ${fmt(floor)} ms (${fmt(floor / b0.median)}x B0)`
          : '';
      targets.push(
        ratioTarget({
          issue: 14,
          name: `tasks/get p99, polled every ${config.pollEveryMs} ms, ${largest.toLocaleString('en-US')} open (${variant.id === 'sqlite' ? 'SQLite' : 'PostgreSQL'}) vs B0`,
          measured: value.median / b0.median,
          bound: 1.5,
          atLeast: false,
          unit: 'x B0',
          detail: `${fmt(value.median)} vs ${fmt(b0.median)} ms${limit}`,
          ...(variant.notRun === undefined ? {} : { reason: variant.notRun }),
        }),
      );
    }
  }
  return { rows, targets };
}
