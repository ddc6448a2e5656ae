import { parseArgs } from './arguments.js';
import { settle, type Settled } from './outcome.js';
import { ToolRpcError, type TaskContext, type TaskToolDefinition } from './tool.js';

/** How a handler call ended: settled (returned or threw), or its thread died under it. */
export type Invoked = Settled | { readonly crashed: string };

/**
 * Where handlers run: in this thread (`inThreadHandlers`) or in worker threads (`HandlerThreads`).
 * The runner owns one: starts it with the runner, stops it after the last run has ended.
 */
export interface HandlerHost {
  /** Null when handlers can run at once; else resolves once they can, or rejects saying why not. */
  start(): Promise<void> | null;
  /**
   * Runs `tool`'s handler on `args` (as stored: validated here again) with `ctx`. Never rejects: a
   * handler's exception is a settled error, a dead thread is `crashed`.
   */
  invoke(tool: TaskToolDefinition, args: unknown, ctx: TaskContext): Promise<Invoked>;
  close(): Promise<void>;
}

/**
 * Validates the stored arguments and runs the handler: the one body of a run, in this thread or in
 * a worker thread. A failed validation means the schema changed under a stored task: -32602.
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

/** Handlers on the serving thread's event loop: the default. */
export const inThreadHandlers: HandlerHost = {
  start: () => null,
  invoke: (tool, args, ctx) => invokeHandler(tool, args, ctx),
  close: () => Promise.resolve(),
};
