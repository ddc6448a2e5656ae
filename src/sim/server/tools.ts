/**
 * The tool the simulated server runs. It waits in virtual time through its process's clock scope
 * (so a crash freezes it mid-step), checkpoints every step (so a re-run resumes), may ask for input
 * once, may fail, and returns a result whose size varies (large results are what truncation hits).
 * Its last step ignores the abort signal, like a final commit, so cancels can lose to it or leave a
 * late outcome behind.
 */
import { z } from 'zod';
import type { ClockScope } from '../clock.js';
import { defineTaskTool, ToolRpcError, type TaskToolDefinition } from '../../runner/tool.js';

export const SIM_TOOL = 'sim_work';
/** Same work, but a 5 s TTL: its finished tasks expire (60 s after the terminal instant, S7). */
export const SIM_TOOL_SHORT_TTL = 'sim_work_short_ttl';
/** Same work, never a task: the server answers the call itself, synchronously (C12). */
export const SIM_TOOL_INLINE = 'sim_work_inline';
/** Same work with a 30 s poll interval, as a slow-moving server suggests (cancel cadence, defect 7). */
export const SIM_TOOL_SLOW_POLL = 'sim_work_slow_poll';

export const simArgs = z.object({
  /** The call node this task serves: lets the checkers map server tasks to client operations. */
  op: z.string(),
  steps: z.number().int().min(1),
  stepMs: z.number().int().min(1),
  ask: z.boolean(),
  fail: z.boolean(),
  size: z.number().int().min(0),
});
export type SimArgs = z.infer<typeof simArgs>;

export interface ToolHooks {
  /** Called when a run starts its last step: the handler returns at virtual instant `at`. */
  lastStep(op: string, at: number): void;
}

export const INPUT_SCHEMA = {
  type: 'object',
  properties: { ok: { type: 'boolean' } },
  required: ['ok'],
} as const;

function simTool(
  name: string,
  pollIntervalMs: number,
  ttlMs: number,
  scope: ClockScope,
  hooks: ToolHooks,
  taskSupport: 'required' | 'forbidden' = 'required',
) {
  return defineTaskTool({
    name,
    description: 'simulated long-running work',
    inputSchema: simArgs,
    taskSupport,
    pollIntervalMs,
    ttlMs,
    handler: async (args, ctx) => {
      let answer: unknown = null;
      if (args.ask) {
        const reply = await ctx.requestInput({ ...INPUT_SCHEMA }, `confirm ${args.op}`);
        answer = reply.content ?? reply.action;
      }
      const from = typeof ctx.lastCheckpoint === 'number' ? ctx.lastCheckpoint : 0;
      for (let i = from; i < args.steps; i++) {
        const last = i === args.steps - 1;
        if (last) hooks.lastStep(args.op, scope.now() + args.stepMs);
        // The last step is a commit that cannot be interrupted: a cancel that lands during it wins on
        // the server, and the completion that follows is only a late outcome (S4).
        await scope.sleep(args.stepMs, last ? undefined : ctx.signal);
        if (last) break;
        await ctx.progress(i + 1, args.steps);
        await ctx.checkpoint(i + 1);
      }
      if (args.fail) throw new ToolRpcError(-32000, `simulated failure of ${args.op}`, { op: args.op });
      return {
        content: [{ type: 'text', text: `${args.op}:${'x'.repeat(args.size)}` }],
        structuredContent: { op: args.op, steps: args.steps, answer },
      };
    },
  });
}

export function simTools(scope: ClockScope, hooks: ToolHooks): TaskToolDefinition<SimArgs>[] {
  return [
    simTool(SIM_TOOL, 500, 600_000, scope, hooks),
    simTool(SIM_TOOL_SHORT_TTL, 1000, 5_000, scope, hooks),
    simTool(SIM_TOOL_INLINE, 500, 600_000, scope, hooks, 'forbidden'),
    simTool(SIM_TOOL_SLOW_POLL, 30_000, 600_000, scope, hooks),
  ];
}
