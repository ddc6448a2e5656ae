import type { LogLine } from '../core/log.js';
import type { OrderedEvent } from '../core/task-events.js';
import type { Progress, RpcError, TaskRecord, WireName } from '../core/task.js';
import type { TaskEvents } from '../store/events.js';
import type { CancelOutcome, CreateOutcome, KeyLookup, ListQuery, TaskPage } from '../store/port.js';
import type { TaskToolDefinition, ToolResult } from './tool.js';
import type { CallWebhook } from './webhooks.js';

/**
 * The core service every wire adapter talks to: it decodes a wire request into one of these
 * commands and encodes the returned `TaskRecord` back. No wire vocabulary appears here.
 * Owner (principal) checks happen inside: a foreign id is `not_found` like an unknown one (S8).
 */
export interface TaskEngine {
  /** The tools this engine can run, by name. */
  readonly tools: ReadonlyMap<string, TaskToolDefinition>;
  readonly events: TaskEvents;

  /**
   * Validates the arguments against the tool's schema (`invalid_argument` on failure, nothing
   * written), then creates the task durably and wakes a runner. Resolves only after the commit (S1).
   * With a submission key: idempotent per owner (S5, S6).
   */
  submit(command: SubmitCommand): Promise<CreateOutcome>;

  /**
   * Runs a tool inline, without a task (clients that cannot take one, `forbidden` tools). Aborting
   * `signal` aborts the handler. Arguments are validated as for `submit`.
   */
  runInline(command: InlineCommand): Promise<InlineOutcome>;

  /** Rejects `not_found` for unknown, foreign, expired or malformed ids. */
  get(owner: string, id: string): Promise<TaskRecord>;
  cancel(owner: string, id: string): Promise<CancelOutcome>;
  respond(owner: string, id: string, responses: Readonly<Record<string, unknown>>): Promise<TaskRecord>;
  list(owner: string, query: ListQuery): Promise<TaskPage>;
  /** Every owner's tasks, as `list` pages them: for an operator (the console), never for a wire (S8). */
  listAllOwners(query: ListQuery): Promise<TaskPage>;
  lookupKey(owner: string, submissionKey: string): Promise<KeyLookup>;

  /**
   * A page of the task's own log (`ctx.log` / `ctx.output` lines) after `query.after`. Rejects
   * `not_found` as `get` does (S8), `invalid_argument` for a negative or non-integer `after` or a
   * `limit` outside 1..1000.
   */
  readLog(owner: string, id: string, query: LogReadQuery): Promise<TaskLogPage>;

  /**
   * A page of the task's ordered events (status changes, progress, input rounds, log lines; issue
   * 32) after `query.cursor`, each exactly once and in seq order. Rejects `not_found` as `get` does
   * (S8), `invalid_argument` (field `cursor` or `limit`) for a malformed cursor, a cursor of another
   * task, a cursor ahead of the task's last event or a `limit` outside 1..1000.
   */
  readEvents(owner: string, id: string, query: EventReadQuery): Promise<TaskEventPage>;

  /**
   * Resolves with the task as soon as it differs from `sinceUpdatedAt` (or is terminal), or when
   * `timeoutMs` passes, whichever is first. Used by blocking reads (2025 `tasks/result`, AIP
   * `:wait`). Rejects `not_found` as `get` does.
   */
  waitForChange(owner: string, id: string, options: WaitOptions): Promise<TaskRecord>;

  /** Starts the runner loop and the TTL sweeper. */
  start(): void;
  /** Stops claiming, aborts running handlers, releases their leases, waits for them. */
  stop(): Promise<void>;
}

export interface SubmitCommand {
  readonly owner: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly wire: WireName;
  readonly submissionKey?: string;
  /** Requested TTL; the engine clamps it to the tool's maximum. */
  readonly ttlMs?: number | null;
  /** SEP-1391 `keepAlive`, in milliseconds, counted from the terminal instant. */
  readonly keepAliveMs?: number;
  /**
   * Where this task's terminal state (or each status change) is delivered, besides the operator's
   * endpoints (issue 32). Checked before anything is written: a bad URL, scheme or secret, or a
   * target the policy refuses, is `invalid_argument`.
   */
  readonly webhook?: CallWebhook;
}

export interface InlineCommand {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly signal: AbortSignal;
  readonly onProgress?: (progress: Progress) => void;
}

export type InlineOutcome =
  | { readonly status: 'completed'; readonly result: ToolResult }
  | { readonly status: 'failed'; readonly error: RpcError };

/** Which log lines `readLog` returns. */
export interface LogReadQuery {
  /** Lines with a seq above this; default 0 (from the start). */
  readonly after?: number;
  /** 1..1000; default 100. */
  readonly limit?: number;
}

/** One page of a task's log, and where the reader stands. */
export interface TaskLogPage {
  readonly task: TaskRecord;
  readonly lines: readonly LogLine[];
  /** Pass as `after` to read on; `after` itself when no line came back. */
  readonly next: number;
  /** Oldest lines deleted so far by the per-task bound. */
  readonly dropped: number;
  /** The highest seq written so far (0: none); a follower that wants only new lines starts there. */
  readonly lastSeq: number;
  /** The task is terminal and no line is left after `next`: nothing more will come. */
  readonly done: boolean;
}

/** Which events `readEvents` returns. */
export interface EventReadQuery {
  /** From a previous page's `cursor` (or `_meta`); absent: from the first event. */
  readonly cursor?: string;
  /** 1..1000; default 100. */
  readonly limit?: number;
}

/** One page of a task's ordered events, and where the reader stands. */
export interface TaskEventPage {
  readonly task: TaskRecord;
  readonly events: readonly OrderedEvent[];
  /** Where the reader stands: the last event of a full page, else the task's last seq. */
  readonly next: number;
  /** The cursor to read on from: it stands after `next`. */
  readonly cursor: string;
  /** The seq of the task's last event so far. */
  readonly lastSeq: number;
  /**
   * Seqs between the cursor read from and `next` with no event in `events`: progress and log events
   * the per-task bound dropped (`EventBound`). Status and input events are never among them.
   */
  readonly skipped: number;
  /** The task is terminal and no event is left after `next`: nothing more will come. */
  readonly done: boolean;
}

export interface WaitOptions {
  readonly sinceUpdatedAt?: number;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}
