/**
 * Figure 11 (issue 14 item 4): one client, one 0 ms task at a time, submit to terminal, in process
 * on a real store (SQLite WAL `synchronous=FULL`, or PostgreSQL). "two commits": the submitting
 * engine runs the task (created claimed, then finished). "three commits": a serve-only engine
 * creates the task and a runner-only engine on the same store and the same in-process events claims
 * it (create, claim, finish), as `serve --no-runner` + a worker, or a node whose slots are full.
 * Rounds interleave (two, three, two, three ...). No target: the issue asks for two commits, and the
 * ratio shows what the third costs (the claim loop's wake-up included).
 */
import { z } from 'zod';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { createLocalEvents } from '../../src/store/events.js';
import type { Row } from '../lib/report.js';
import { openStore } from '../lib/seed.js';
import { summarize } from '../lib/stats.js';
import type { FigureContext, FigureResult } from './context.js';

const tool = defineTaskTool({
  name: 'zero',
  description: 'answers at once',
  inputSchema: z.object({ n: z.number() }),
  handler: async () => ({ content: [{ type: 'text', text: 'ok' }] }),
});

async function timeTasks(submitter: TaskEngine, tasks: number): Promise<number> {
  const start = performance.now();
  for (let n = 0; n < tasks; n += 1) {
    const { task } = await submitter.submit({ owner: 'o', tool: 'zero', args: { n }, wire: 'mcp-tasks-ext' });
    let seen = task;
    while (seen.status === 'working') {
      seen = await submitter.waitForChange('o', task.id, { sinceUpdatedAt: seen.updatedAt, timeoutMs: 5_000 });
    }
  }
  return (performance.now() - start) / tasks;
}

type Mode = 'two' | 'three';

export async function runCommits(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const stores = env.variants.filter((v) => v.id === 'sqlite' || v.id === 'postgres');
  const results = new Map<string, number[]>();
  const key = (variant: string, mode: Mode): string => `${variant}/${mode}`;
  for (let round = 0; round < config.rounds; round += 1) {
    for (const variant of stores) {
      if (variant.notRun !== undefined) continue;
      for (const mode of ['two', 'three'] as const) {
        ctx.log(`figure 11: round ${round + 1}/${config.rounds}, ${variant.id}, ${mode} commits`);
        const store = await openStore(env.freshDb(variant.id, `commits-${mode}`));
        const events = createLocalEvents();
        const base = { store, events, tools: [tool], clock: systemClock, ids: systemIds };
        const runner = createEngine({ ...base, nodeId: 'runner' });
        runner.start();
        const submitter = mode === 'two' ? runner : createEngine({ ...base, nodeId: 'serve-only' });
        try {
          const ms = await timeTasks(submitter, config.commitTasks);
          results.set(key(variant.id, mode), [...(results.get(key(variant.id, mode)) ?? []), ms]);
        } finally {
          await runner.stop();
          await store.close();
        }
      }
    }
  }
  const rows: Row[] = [];
  const metric = 'submit to terminal, 1 client, 0 ms task (ms per task)';
  for (const variant of stores) {
    for (const mode of ['two', 'three'] as const) {
      const setting =
        mode === 'two'
          ? 'two commits: created claimed, finished'
          : 'three commits: created, claimed by the loop, finished';
      if (variant.notRun !== undefined) {
        rows.push({ figure: 11, metric, variant: variant.label, setting, notRun: variant.notRun });
        continue;
      }
      const value = summarize(results.get(key(variant.id, mode)) ?? []);
      const two = summarize(results.get(key(variant.id, 'two')) ?? []);
      rows.push({
        figure: 11,
        metric,
        variant: variant.label,
        setting: `${setting}, ${config.commitTasks} tasks`,
        value,
        ...(mode === 'three' ? { ratio: { to: 'two commits', value: value.median / two.median } } : {}),
      });
    }
  }
  return { rows, targets: [] };
}
