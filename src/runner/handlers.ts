import type { NewLogLine } from '../core/log.js';
import { parseArgs } from './arguments.js';
import { settle, type Settled } from './outcome.js';
import { ToolRpcError, type TaskContext, type TaskToolDefinition } from './tool.js';

/**
 * How a handler call ended: settled (returned or threw); its worker died under it (`crashed`,
 * `overLimit` when one of the worker's limits ended it); or given up on the serving thread
 * (`abandoned`: its `kill` signal aborted, and a handler there cannot be stopped).
 */
export type Invoked =
  Settled | { readonly crashed: string; readonly overLimit: boolean } | { readonly abandoned: string };

/** What a host gets for one run besides the handler's own context. */
export interface HostedRun {
  /**
   * Aborts when the run must end now: its signal aborted and the handler did not return within
   * the grace period. A host that can end it (a worker process) does, and resolves `crashed`;
   * one that cannot resolves `abandoned` at once.
   */
  readonly kill: AbortSignal;
  /** Stores lines a worker already checked, cut and bounded, after `skipped` it dropped. */
  writeLog(lines: readonly NewLogLine[], skipped: number): Promise<void>;
}

/**
 * Where handlers run: in this thread (`inThreadHandlers`) or in worker processes
 * (`HandlerWorkers`). The runner owns one: starts it with the runner, stops it after the last run
 * has ended.
 */
export interface HandlerHost {
  /** Null when handlers can run at once; else resolves once they can, or rejects saying why not. */
  start(): Promise<void> | null;
  /**
   * Runs `tool`'s handler on `args` (as stored: validated here again) with `ctx`. Never rejects: a
   * handler's exception is a settled error, a dead worker is `crashed`.
   */
  invoke(tool: TaskToolDefinition, args: unknown, ctx: TaskContext, run: HostedRun): Promise<Invoked>;
  close(): Promise<void>;
}

/**
 * Validates the stored arguments and runs the handler: the one body of a run, in this thread or in
 * a worker. A failed validation means the schema changed under a stored task: -32602.
 */
export function invokeHandler(tool: TaskToolDefinition, args: unknown, ctx: TaskContext): Promise<Settled> {
  let parsed: Record<string, unknown>;
  try {
    parsed = parseArgs(tool, args);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return Promise.resolve({ ok: false, error: new ToolRpcError(-32602, message) });
  }
  return settle(() => tool.handler(parsed, ctx));
}

/**
 * Handlers on the serving thread's event loop: the default. Such a handler cannot be stopped: when
 * its run's `kill` aborts, the run is given up (`abandoned`) and the handler goes on by itself.
 */
export const inThreadHandlers: HandlerHost = {
  start: () => null,
  invoke: (tool, args, ctx, run) => {
    const handler = invokeHandler(tool, args, ctx);
    if (run.kill.aborted) return Promise.resolve({ abandoned: reasonText(run.kill.reason) });
    const given = new Promise<Invoked>((resolve) =>
      run.kill.addEventListener('abort', () => resolve({ abandoned: reasonText(run.kill.reason) }), { once: true }),
    );
    return Promise.race([handler, given]);
  },
  close: () => Promise.resolve(),
};

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
