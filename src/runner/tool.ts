import type { z } from 'zod';
import type { Logger } from '../core/ports.js';
import type { RpcError } from '../core/task.js';

/**
 * How a tool relates to tasks.
 * - `optional` (default): a task when the caller's wire can take one, else run inline.
 * - `required`: only as a task; a caller that cannot take a task gets `-32021`.
 * - `forbidden`: always inline, never a task (e.g. `greet`).
 */
export type TaskSupport = 'optional' | 'required' | 'forbidden';

/** The `CallToolResult` a handler returns (MCP content blocks are passed through as they are). */
export interface ToolResult<Out extends Record<string, unknown> = Record<string, unknown>> {
  readonly content: readonly Record<string, unknown>[];
  /** Checked against the tool's `outputSchema` when it has one; a mismatch is a tool error. */
  readonly structuredContent?: Out;
  /** A tool-level error: the task still ends `completed`. */
  readonly isError?: boolean;
}

/** The reply to an input request: the MCP `ElicitResult` shape. */
export interface InputReply {
  readonly action: 'accept' | 'decline' | 'cancel';
  readonly content?: Record<string, unknown>;
}

/**
 * What a handler gets while it runs. A handler MUST stop soon after `signal` aborts (cancel, lease
 * lost or shutdown); it SHOULD checkpoint long work so a re-run after a crash resumes from
 * `lastCheckpoint` instead of from the start.
 */
export interface TaskContext {
  readonly taskId: string;
  /** Aborted when the task is cancelled (within one heartbeat), its lease is lost or the node stops. */
  readonly signal: AbortSignal;
  /** 1 on the first run, 2 on the first re-run after a crash, ... */
  readonly attempt: number;
  /** Execution epoch of this run; every write of this run is fenced by it (S3). */
  readonly epoch: number;
  /** The data of the last `checkpoint()` of an earlier run, or undefined. */
  readonly lastCheckpoint: unknown;
  readonly logger: Logger;
  /** Durable progress: shown by `tasks/get` status messages and progress-capable wires. */
  progress(done: number, total?: number, message?: string): Promise<void>;
  /** Durably stores `data`; a re-run of this task sees it as `lastCheckpoint`. */
  checkpoint(data: unknown): Promise<void>;
  /**
   * Asks the client for input (an `elicitation/create` form). The task shows `input_required`
   * until the reply arrives; the request and the reply are durable, so a re-run that asks the same
   * question in the same order gets the stored reply without asking again.
   */
  requestInput(requestedSchema: Record<string, unknown>, message: string): Promise<InputReply>;
  /**
   * Appends a line to the task's own log (issue 18), readable by `terminus/tasks/logs` and
   * `GET /v1/operations/{id}/logs` while the task runs: durable once the promise resolves (a crash
   * keeps it; a re-run's lines follow, marked with the next epoch), fenced like every write of this
   * run (`lease_lost` when a newer run holds the task, `already_terminal` once it ended). `fields`
   * MUST be a plain JSON object. A text over the engine's `logLimits.maxLineBytes` (8 KiB) is
   * truncated and marked; over 1 MiB it is refused (`invalid_argument`).
   */
  log(text: string, fields?: Record<string, unknown>): Promise<void>;
  /** As `log`, on the `output` stream: a chunk of partial result rather than a line for a person. */
  output(text: string): Promise<void>;
}

/** MCP `ToolAnnotations`: hints for clients, never trusted for security (listed as given). */
export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
  readonly [key: string]: unknown;
}

/** An MCP `Icon` (`tools/list` shows it as given). */
export interface ToolIcon {
  readonly src: string;
  readonly mimeType?: string;
  readonly sizes?: readonly string[];
  readonly theme?: 'light' | 'dark';
}

/**
 * A tool whose calls run as durable tasks. Every field of an MCP tool is listed in `tools/list` on
 * every wire (`title`, `description`, `inputSchema`, `outputSchema`, `annotations`, `icons`,
 * `_meta`); `taskSupport`, `ttlMs` and `pollIntervalMs` are how its tasks behave.
 */
export interface TaskToolDefinition<
  Args extends Record<string, unknown> = Record<string, unknown>,
  Out extends Record<string, unknown> = Record<string, unknown>,
> {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  /** Arguments are validated with this before any task is created; a failure is `-32602`. */
  readonly inputSchema: z.ZodType<Args>;
  /**
   * The shape of the result's `structuredContent`. A result that is not a tool error and whose
   * `structuredContent` is missing or does not match ends as a tool error (`isError: true`) naming
   * the mismatch, so a client that validates against the listed schema never sees a bad value.
   */
  readonly outputSchema?: z.ZodType<Out>;
  readonly annotations?: ToolAnnotations;
  readonly icons?: readonly ToolIcon[];
  /** Listed as the tool's `_meta`. */
  readonly _meta?: Record<string, unknown>;
  readonly taskSupport?: TaskSupport;
  /** Task TTL from creation; default 1 hour. Null for unlimited. */
  readonly ttlMs?: number | null;
  /** Suggested poll interval; default 1000 ms. */
  readonly pollIntervalMs?: number;
  /** `Out` is inferred from `outputSchema` only, never from what the handler happens to return. */
  readonly handler: (args: Args, ctx: TaskContext) => Promise<ToolResult<NoInfer<Out>>>;
}

/**
 * Thrown by a handler to end its task `failed` with a JSON-RPC error. Any other exception
 * is a tool error: the task ends `completed` with `isError: true`.
 * @example
 * if (!(await backend.ready())) throw new ToolRpcError(-32010, 'backend refused', { backend: 'billing' });
 */
export class ToolRpcError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'ToolRpcError';
    this.code = code;
    this.data = data;
  }

  toRpcError(): RpcError {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/**
 * Defines a task tool. Identity function with types, so a tool file reads as data.
 * @example
 * export const report = defineTaskTool({
 *   name: 'report', description: 'Builds a report', inputSchema: z.object({ pages: z.number() }),
 *   handler: async ({ pages }, ctx) => {
 *     for (let p = (ctx.lastCheckpoint as number | undefined) ?? 0; p < pages; p++) {
 *       ctx.signal.throwIfAborted();
 *       await ctx.progress(p, pages, `page ${p}`);
 *       await ctx.checkpoint(p + 1);
 *     }
 *     return { content: [{ type: 'text', text: `${pages} pages` }] };
 *   },
 * });
 */
export function defineTaskTool<
  Args extends Record<string, unknown>,
  Out extends Record<string, unknown> = Record<string, unknown>,
>(definition: TaskToolDefinition<Args, Out>): TaskToolDefinition<Args, Out> {
  return definition;
}
