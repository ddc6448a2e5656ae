import { ERROR_CODES, TerminusError, type ErrorCode } from '../../core/errors.js';
import type { NewLogLine } from '../../core/log.js';
import type { LogLimits } from '../task-log.js';
import { ToolRpcError, type TaskContext } from '../tool.js';

/**
 * The `TaskContext` methods a handler in a worker process calls through the engine's process:
 * each call is one `call` message, answered by one `reply` with what the engine's own context
 * method resolved or rejected with. Every one of them writes through the store, which lives in
 * the engine's process only (fenced writes, S3), so this list is the whole of what crosses for a
 * context. `log` and `output` are the exception: the worker batches their lines itself
 * (`LOCAL_CALLS`) and sends each batch as one `appendLog` call.
 *
 * A new asynchronous context method is one more name here; the check below fails to compile until
 * every such method of `TaskContext` is listed.
 */
export const CONTEXT_CALLS = ['progress', 'checkpoint', 'requestInput', 'log', 'output'] as const;

/** Context methods the worker answers itself (batched lines), never one message per call. */
export const LOCAL_CALLS = ['log', 'output'] as const;

/** Names of the `TaskContext` members that are functions returning a Promise. */
type AsyncContextMethod = {
  [K in keyof TaskContext]-?: TaskContext[K] extends (...args: never[]) => Promise<unknown> ? K : never;
}[keyof TaskContext];
type Unlisted = Exclude<AsyncContextMethod, (typeof CONTEXT_CALLS)[number]>;
// A compile-time check: `true` only type-checks while `Unlisted` is empty.
export const EVERY_CONTEXT_METHOD_LISTED: [Unlisted] extends [never] ? true : Unlisted = true;

export type ContextCall = (typeof CONTEXT_CALLS)[number];

/**
 * What a worker may call: a context method, `appendLog(lines, skipped)` (a batch of its task log,
 * after `skipped` lines its own bound dropped) or `logger(entries, dropped)` (a batch of
 * `ctx.logger` lines).
 */
export type WorkerCall = Exclude<ContextCall, (typeof LOCAL_CALLS)[number]> | 'appendLog' | 'logger';

/** One `ctx.logger` line of a worker's handler. */
export interface LoggerEntry {
  readonly level: Level;
  readonly message: string;
  readonly fields?: Record<string, unknown>;
}

/** The fields of a context that are values: copied into the worker once, at the start of a run. */
export interface ContextFields {
  readonly taskId: string;
  readonly attempt: number;
  readonly epoch: number;
  readonly lastCheckpoint: unknown;
}

/** What a worker process loads, in its first message. */
export interface WorkerData {
  /** URL of the module that defines the tools. */
  readonly module: string;
  /** Its export holding the tools: an array, or a function of `data` returning one. */
  readonly exportName: string;
  readonly data: unknown;
  /** The engine's task log limits: the worker checks, cuts and bounds its lines itself. */
  readonly logLimits: LogLimits;
  /** Largest result or call argument (v8-serialised bytes) the worker sends; larger is refused there. */
  readonly maxMessageBytes: number;
}

/** An error as it crosses to another process (structured clone keeps no class). */
export type WireError =
  | {
      readonly kind: 'rpc';
      readonly code: number;
      readonly message: string;
      readonly data: unknown;
      readonly stack?: string;
    }
  | {
      readonly kind: 'terminus';
      readonly code: string;
      readonly message: string;
      readonly details?: Record<string, unknown>;
      readonly stack?: string;
    }
  | { readonly kind: 'error'; readonly name: string; readonly message: string; readonly stack?: string }
  /** A thrown non-Error (a string, an object). */
  | { readonly kind: 'value'; readonly value: unknown };

export type Level = 'debug' | 'info' | 'warn' | 'error';

/** Engine process to worker process. */
export type ToWorker =
  | { readonly type: 'load'; readonly data: WorkerData }
  | {
      readonly type: 'run';
      readonly run: number;
      readonly tool: string;
      readonly args: unknown;
      readonly fields: ContextFields;
    }
  | { readonly type: 'abort'; readonly run: number; readonly reason: WireError }
  | { readonly type: 'reply'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly type: 'reply'; readonly id: number; readonly ok: false; readonly error: WireError };

/** Worker process to engine process. */
export type FromWorker =
  | { readonly type: 'ready'; readonly tools: readonly string[] }
  | { readonly type: 'load_failed'; readonly error: WireError }
  | {
      readonly type: 'call';
      readonly run: number;
      readonly id: number;
      readonly method: WorkerCall;
      readonly args: readonly unknown[];
    }
  /** A result, v8-serialised in the worker (its size was checked there). */
  | { readonly type: 'settled'; readonly run: number; readonly ok: true; readonly payload: Uint8Array }
  | { readonly type: 'settled'; readonly run: number; readonly ok: false; readonly error: WireError }
  /** An uncaught exception: the worker process exits right after sending it. */
  | { readonly type: 'fatal'; readonly error: WireError };

/** The arguments of an `appendLog` call. */
export type AppendLogArgs = readonly [lines: readonly NewLogLine[], skipped: number];
/** The arguments of a `logger` call. */
export type LoggerArgs = readonly [entries: readonly LoggerEntry[], dropped: number];

function withStack<T extends object>(fields: T, error: Error): T & { stack?: string } {
  return error.stack === undefined ? fields : { ...fields, stack: error.stack };
}

/**
 * An error as data. A `ToolRpcError` is recognised by name and shape too, so one from another copy
 * of the package (the author's tools module importing `mcp-terminus` from elsewhere) still fails
 * the task with its JSON-RPC code.
 */
export function encodeError(error: unknown): WireError {
  if (error instanceof TerminusError) {
    const fields = { kind: 'terminus' as const, code: error.code, message: error.message };
    return withStack(error.details === undefined ? fields : { ...fields, details: error.details }, error);
  }
  if (error instanceof Error) {
    const { code, data } = error as { code?: unknown; data?: unknown };
    if ((error instanceof ToolRpcError || error.name === 'ToolRpcError') && typeof code === 'number') {
      return withStack({ kind: 'rpc', code, message: error.message, data: cloneable(data) }, error);
    }
    return withStack({ kind: 'error', name: error.name, message: error.message }, error);
  }
  return { kind: 'value', value: cloneable(error) };
}

/** The error again, as its class: `TerminusError` (code, details), `ToolRpcError` or `Error`. */
export function decodeError(wire: WireError): unknown {
  let error: Error;
  switch (wire.kind) {
    case 'value':
      return wire.value;
    case 'rpc':
      error = new ToolRpcError(wire.code, wire.message, wire.data);
      break;
    case 'terminus': {
      const code = (ERROR_CODES as readonly string[]).includes(wire.code) ? (wire.code as ErrorCode) : 'internal';
      error = new TerminusError(code, wire.message, wire.details === undefined ? {} : { details: wire.details });
      break;
    }
    case 'error':
      error = new Error(wire.message);
      error.name = wire.name;
      break;
  }
  // The stack of the process that threw: where the handler author needs to look.
  if (wire.stack !== undefined) error.stack = wire.stack;
  return error;
}

/** `value` if structured clone takes it, else its JSON form, else its string form. */
export function cloneable(value: unknown): unknown {
  try {
    structuredClone(value);
    return value;
  } catch {
    try {
      return JSON.parse(JSON.stringify(value) ?? 'null') as unknown;
    } catch {
      return String(value);
    }
  }
}
