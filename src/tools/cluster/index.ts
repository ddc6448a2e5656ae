import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTaskTool, type TaskToolDefinition } from '../../runner/tool.js';

/**
 * Fixture tools for the multi-node tests, served by `terminus serve --fixtures cluster`. Every side
 * effect is one JSON line appended to `<dataDir>/cluster-effects.jsonl` (O_APPEND: lines from
 * several node processes sharing the folder never interleave), tagged with the task, the execution
 * epoch and the pid (and parent pid) of the process that ran it, so a test can count effects per
 * (task, epoch) and tell which node held a task.
 */
export const CLUSTER_EFFECTS_FILE = 'cluster-effects.jsonl';

/** One line of the effects file. */
export interface ClusterEffect {
  readonly kind: 'effect' | 'started' | 'aborted' | 'answered';
  readonly taskId: string;
  readonly epoch: number;
  readonly attempt: number;
  readonly pid: number;
  /** The parent of the process that ran the handler: the node itself under `--workers N`. */
  readonly ppid: number;
  /** `effect` only: the step done. */
  readonly step?: number;
}

export interface ClusterToolsOptions {
  /** Folder of the effects file; created on the first effect. */
  readonly dataDir: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool keeps its own Args type
export function clusterTools(options: ClusterToolsOptions): TaskToolDefinition<any>[] {
  const file = join(options.dataDir, CLUSTER_EFFECTS_FILE);
  let folder: Promise<unknown> | undefined;
  const record = async (effect: ClusterEffect): Promise<void> => {
    folder ??= mkdir(options.dataDir, { recursive: true });
    await folder;
    await appendFile(file, `${JSON.stringify(effect)}\n`);
  };
  const tag = (ctx: { taskId: string; epoch: number; attempt: number }) => ({
    taskId: ctx.taskId,
    epoch: ctx.epoch,
    attempt: ctx.attempt,
    pid: process.pid,
    ppid: process.ppid,
  });

  const countEffects = defineTaskTool({
    name: 'count_effects',
    description: 'Does `steps` steps of `stepMs` each; each step is one recorded side effect, then a checkpoint.',
    inputSchema: z.object({
      steps: z.number().int().min(1).max(100),
      stepMs: z.number().int().min(0).max(10_000),
      label: z.string().optional(),
    }),
    taskSupport: 'required',
    pollIntervalMs: 200,
    handler: async ({ steps, stepMs }, ctx) => {
      const resumedFrom = (ctx.lastCheckpoint as { next?: number } | undefined)?.next ?? 0;
      for (let step = resumedFrom; step < steps; step += 1) {
        await sleep(stepMs, undefined, { signal: ctx.signal });
        // Effect first, checkpoint second: a crash between the two repeats this one step on the
        // re-run, which is exactly what "at least once per epoch, resumed from the checkpoint" means.
        await record({ kind: 'effect', ...tag(ctx), step });
        await ctx.checkpoint({ next: step + 1 });
      }
      return {
        content: [{ type: 'text', text: `${steps} steps at epoch ${ctx.epoch}` }],
        structuredContent: { ...tag(ctx), steps, resumedFrom },
      };
    },
  });

  const hold = defineTaskTool({
    name: 'hold',
    description: 'Records that it started, then waits `seconds` or until aborted (recorded too).',
    inputSchema: z.object({ seconds: z.number().min(0).max(600) }),
    taskSupport: 'required',
    pollIntervalMs: 200,
    handler: async ({ seconds }, ctx) => {
      await record({ kind: 'started', ...tag(ctx) });
      try {
        await sleep(seconds * 1000, undefined, { signal: ctx.signal });
      } catch (error) {
        if (ctx.signal.aborted) await record({ kind: 'aborted', ...tag(ctx) });
        throw error;
      }
      return { content: [{ type: 'text', text: 'held' }], structuredContent: tag(ctx) };
    },
  });

  const ask = defineTaskTool({
    name: 'ask',
    description: 'Records that it started, asks for an answer (input_required), records and returns it.',
    inputSchema: z.object({ question: z.string() }),
    taskSupport: 'required',
    pollIntervalMs: 200,
    handler: async ({ question }, ctx) => {
      await record({ kind: 'started', ...tag(ctx) });
      const reply = await ctx.requestInput(
        { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
        question,
      );
      await record({ kind: 'answered', ...tag(ctx) });
      const answer = typeof reply.content?.answer === 'string' ? reply.content.answer : reply.action;
      return { content: [{ type: 'text', text: answer }], structuredContent: { ...tag(ctx), answer } };
    },
  });

  return [countEffects, hold, ask];
}
