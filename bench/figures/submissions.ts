/**
 * Figures 1 and 5, from the same server processes: durable submissions per second with 1 and 16
 * concurrent clients (stdio: requests in flight on the one connection; HTTP: one session each, its
 * creates sent by `wrk` for `wrkSeconds` when it is on the PATH, `bench/lib/wrk.ts`), and
 * the round trip of a 0 ms tool as a task (`tools/call` with `task`, then the blocking
 * `tasks/result`) against the plain synchronous call (B1 in the B0 process, inline in ours).
 * Figure 5 runs first, on a quiet server; figure 1's bursts leave background work behind.
 */
import { callSync, pool, submitTask, taskResult } from '../client/tasks.js';
import type { RpcClient } from '../client/rpc.js';
import { withServer, type RunningServer, type Transport } from '../lib/proc.js';
import { fmt, ratioTarget, type Row, type Target } from '../lib/report.js';
import { summarize } from '../lib/stats.js';
import { wrkLoad } from '../lib/wrk.js';
import type { Variant, VariantId } from '../lib/variants.js';
import type { FigureContext, FigureResult } from './context.js';

interface ProcessResult {
  readonly rates: ReadonlyMap<number, number>;
  readonly taskRttMs: number;
  readonly syncRttMs: number;
}

const TRANSPORTS: readonly Transport[] = ['stdio', 'http'];

async function measure(server: RunningServer, variant: Variant, ctx: FigureContext): Promise<ProcessResult> {
  const { config } = ctx;
  const width = Math.max(...config.concurrency);
  const clients: RpcClient[] =
    server.transport === 'stdio'
      ? [await server.connect()]
      : await Promise.all(Array.from({ length: width }, () => server.connect()));
  const first = clients[0]!;
  const roundTrip = async (): Promise<void> => {
    const { taskId } = await submitTask(first, variant.taskTool, { ms: 0 });
    await taskResult(first, taskId);
  };
  const plain = async (): Promise<void> => {
    await callSync(first, variant.syncTool, { ms: 0 });
  };
  const timed = async (calls: number, call: () => Promise<void>): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < calls; i += 1) {
      const start = performance.now();
      await call();
      times.push(performance.now() - start);
    }
    return summarize(times).median;
  };
  // Warm-up: JIT, SQLite page cache, HTTP keep-alive sockets.
  await timed(Math.min(20, config.overheadCalls), roundTrip);
  await timed(Math.min(20, config.overheadCalls), plain);
  const taskRttMs = await timed(config.overheadCalls, roundTrip);
  const syncRttMs = await timed(config.overheadCalls, plain);

  const rates = new Map<number, number>();
  for (const concurrency of config.concurrency) {
    if (server.transport === 'http' && ctx.wrk !== undefined) {
      // Each session's own create, as its client sends it, from wrk's connections (bench/lib/wrk.ts).
      const sends = clients
        .slice(0, concurrency)
        .map((client) => () => submitTask(client, variant.taskTool, { ms: 0 }));
      const load = await wrkLoad(sends, config.wrkSeconds, '"taskId"');
      rates.set(concurrency, load.perSecond);
      continue;
    }
    const start = performance.now();
    await pool(config.submissions, concurrency, async (_i, lane) => {
      await submitTask(clients[lane % clients.length]!, variant.taskTool, { ms: 0 });
    });
    rates.set(concurrency, config.submissions / ((performance.now() - start) / 1000));
  }
  for (const client of clients) await client.close();
  return { rates, taskRttMs, syncRttMs };
}

export async function runSubmissions(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const runnable = env.variants.filter((v) => v.notRun === undefined);
  const results = new Map<string, ProcessResult[]>();
  const key = (variant: VariantId, transport: Transport): string => `${variant}/${transport}`;
  for (let round = 0; round < config.rounds; round += 1) {
    for (const transport of TRANSPORTS) {
      for (const variant of runnable) {
        ctx.log(`figures 1+5: round ${round + 1}/${config.rounds}, ${variant.id} over ${transport}`);
        const spec = env.spec(variant.id, {
          pollMs: config.pollMs,
          ...(variant.id === 'B0' ? {} : { db: env.freshDb(variant.id, 'submit') }),
        });
        const result = await withServer(spec, transport, (server) => measure(server, variant, ctx));
        results.set(key(variant.id, transport), [...(results.get(key(variant.id, transport)) ?? []), result]);
      }
    }
  }

  const rows: Row[] = [];
  const targets: Target[] = [];
  const width = Math.max(...config.concurrency);
  for (const transport of TRANSPORTS) {
    for (const concurrency of config.concurrency) {
      const b0 = summarize((results.get(key('B0', transport)) ?? []).map((r) => r.rates.get(concurrency) ?? NaN));
      for (const variant of env.variants) {
        const setting = `${transport}, ${concurrency} client${concurrency === 1 ? '' : 's'}`;
        if (variant.notRun !== undefined) {
          rows.push({ figure: 1, metric: 'submissions/s', variant: variant.label, setting, notRun: variant.notRun });
          if (variant.id === 'postgres' && transport === 'http' && concurrency === width) {
            targets.push(
              ratioTarget({
                issue: 14,
                name: `durable tools/call creating a task, HTTP, ${concurrency} clients (PostgreSQL) vs B0`,
                measured: NaN,
                bound: 1,
                atLeast: true,
                unit: 'x B0',
                reason: variant.notRun,
              }),
            );
          }
          continue;
        }
        const value = summarize(
          (results.get(key(variant.id, transport)) ?? []).map((r) => r.rates.get(concurrency) ?? NaN),
        );
        const ours = variant.id !== 'B0';
        rows.push({
          figure: 1,
          metric: 'submissions/s',
          variant: variant.label,
          setting,
          value,
          ...(ours ? { ratio: { to: 'B0', value: value.median / b0.median } } : {}),
          note: ours
            ? `${fmt(value.median / ctx.fsyncPerSecond)}x the fsync ceiling (${fmt(ctx.fsyncPerSecond)}/s)`
            : 'in memory: nothing is durable',
        });
        // Issue 14: a durable tools/call creating a task over HTTP, at the widest concurrency, >= 1.0x B0.
        if ((variant.id === 'sqlite' || variant.id === 'postgres') && transport === 'http' && concurrency === width) {
          targets.push(
            ratioTarget({
              issue: 14,
              name: `durable tools/call creating a task, HTTP, ${concurrency} clients (${variant.id === 'sqlite' ? 'SQLite' : 'PostgreSQL'}) vs B0`,
              measured: value.median / b0.median,
              bound: 1,
              atLeast: true,
              unit: 'x B0',
              detail: `${fmt(value.median)} vs ${fmt(b0.median)}/s`,
            }),
          );
        }
        // Issue 31: the same create on SQLite, with creates on the fast path, >= 1.5x B0.
        if (variant.id === 'sqlite' && transport === 'http' && concurrency === width) {
          targets.push(
            ratioTarget({
              issue: 31,
              name: `durable tools/call creating a task, HTTP, ${concurrency} clients (SQLite, creates on the fast path) vs B0`,
              measured: value.median / b0.median,
              bound: 1.5,
              atLeast: true,
              unit: 'x B0',
              detail: `${fmt(value.median)} vs ${fmt(b0.median)}/s`,
            }),
          );
        }
        if (variant.id === 'sqlite' && transport === 'stdio') {
          const ratio = value.median / b0.median;
          targets.push({
            name: `durable submissions, stdio, ${concurrency} client${concurrency === 1 ? '' : 's'} (SQLite)`,
            goal: '>= 0.5x B0',
            measured: ratio,
            unit: 'x B0',
            met: ratio >= 0.5,
            margin: `${ratio - 0.5 >= 0 ? '+' : ''}${fmt(ratio - 0.5)}x`,
          });
        }
      }
    }
  }

  for (const transport of TRANSPORTS) {
    const b1 = summarize((results.get(key('B0', transport)) ?? []).map((r) => r.syncRttMs));
    const metric = '0 ms tool, round trip (ms)';
    rows.push({
      figure: 5,
      metric,
      variant: 'B1 SDK 1.32 plain tools/call',
      setting: transport,
      value: b1,
      note: 'baseline',
    });
    for (const variant of env.variants) {
      if (variant.notRun !== undefined) {
        rows.push({
          figure: 5,
          metric,
          variant: variant.label,
          setting: `${transport}, as a task`,
          notRun: variant.notRun,
        });
        continue;
      }
      const all = results.get(key(variant.id, transport)) ?? [];
      const task = summarize(all.map((r) => r.taskRttMs));
      rows.push({
        figure: 5,
        metric,
        variant: variant.label,
        setting: `${transport}, as a task (tools/call + tasks/result)`,
        value: task,
        ratio: { to: 'B1', value: task.median / b1.median },
        note: `overhead ${fmt(task.median - b1.median)} ms over B1`,
      });
      if (variant.id !== 'B0') {
        const inline = summarize(all.map((r) => r.syncRttMs));
        rows.push({
          figure: 5,
          metric,
          variant: variant.label,
          setting: `${transport}, inline (no task)`,
          value: inline,
          ratio: { to: 'B1', value: inline.median / b1.median },
        });
      }
    }
  }
  return { rows, targets };
}
