/**
 * The durable task: the one record every wire reads and the runner writes.
 * Wire vocabularies (2025-11-25 `ttl`, AIP-151 `done`, ...) are projections of this record made at
 * the edge; nothing here knows about a wire's field names.
 */

/** Statuses of a task. The three terminal ones never change once written (S2). */
export const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TERMINAL_STATUSES = ['completed', 'failed', 'cancelled'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

/**
 * Whether a task status is one of the three terminal ones (a terminal task never changes again).
 * @example
 * const task = await engine.get(owner, taskId);
 * if (isTerminal(task.status)) console.log(task.status, task.result ?? task.error);
 */
export function isTerminal(status: TaskStatus): status is TerminalStatus {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** The wires a task can be created under (docs/wires.md). */
export const WIRES = ['mcp-tasks-ext', 'mcp-2025-11-25', 'sep-1391', 'aip-151'] as const;
export type WireName = (typeof WIRES)[number];

/** A JSON-RPC error object, as stored for a `failed` task. */
export interface RpcError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export interface Progress {
  readonly done: number;
  readonly total?: number;
  readonly message?: string;
}

/**
 * A server-to-client request embedded in a task (`elicitation/create`, `sampling/createMessage`,
 * `roots/list`), keyed by a key unique over the task's lifetime (X-27..X-29).
 */
export interface InputRequest {
  readonly method: string;
  readonly params: Record<string, unknown>;
}

/** What a handler's run left behind after the task became terminal by cancel (S4). */
export interface LateOutcome {
  readonly epoch: number;
  readonly at: number;
  readonly result?: unknown;
  readonly error?: RpcError;
}

/** One durable task. Times are epoch milliseconds from the injected clock. */
export interface TaskRecord {
  /** 128-bit random, base64url; unguessable. */
  readonly id: string;
  /** Principal the task is bound to (S8). */
  readonly owner: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** sha256 of the canonical JSON of `{ tool, args }`. */
  readonly requestDigest: string;
  readonly submissionKey: string | null;
  readonly wire: WireName;
  readonly status: TaskStatus;
  readonly statusMessage: string | null;
  readonly progress: Progress | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Counted from `createdAt`; null means unlimited. Never deletes a working task (S7). */
  readonly ttlMs: number | null;
  readonly pollIntervalMs: number;
  /** SEP-1391 `keepAlive`: retention counted from the terminal instant instead of creation. */
  readonly keepAliveMs: number | null;
  /** When the task became terminal; null while it works. */
  readonly terminalAt: number | null;
  readonly leaseOwner: string | null;
  readonly leaseExpiresAt: number | null;
  /** Execution epoch: 0 before the first claim, +1 on every claim (S3). */
  readonly epoch: number;
  readonly cancelRequested: boolean;
  readonly checkpoint: unknown;
  /** Outstanding input requests by key. */
  readonly inputRequests: Readonly<Record<string, InputRequest>>;
  /** Every response ever received, by key; kept so a re-run handler gets the same answer (S9). */
  readonly inputResponses: Readonly<Record<string, unknown>>;
  /** The `CallToolResult` of a completed task. */
  readonly result: Record<string, unknown> | null;
  readonly error: RpcError | null;
  readonly resultDigest: string | null;
  readonly lateOutcome: LateOutcome | null;
  /**
   * The seq of the task's last ordered event (`core/task-events.ts`): status changes, progress,
   * input rounds and log lines, numbered per task without gaps. 0 before the first.
   */
  readonly eventSeq: number;
}

/**
 * The longest retention (`ttl`, `keepAlive`) a task can get: 100 years. The engine clamps every
 * requested one to it (the wires let a server choose a shorter retention than asked, T-34), so that
 * `createdAt + ttl` stays an exact integer (below 2^53) that every store's integer column holds.
 */
export const MAX_RETENTION_MS = 100 * 365 * 24 * 3_600_000;

/**
 * The instant after which a task may be swept and answers "not found" (S7). Saturates at
 * `Number.MAX_SAFE_INTEGER` ("never", in practice), so a retention stored before the engine clamped
 * it cannot make the terminal write unrecordable.
 */
export function expiresAt(task: TaskRecord): number | null {
  if (task.keepAliveMs !== null) {
    return task.terminalAt === null ? null : saturated(task.terminalAt + task.keepAliveMs);
  }
  if (task.ttlMs === null) return null;
  const byTtl = task.createdAt + task.ttlMs;
  // A working task outlives its TTL; once terminal it stays readable until the TTL or, if the TTL
  // passed while it worked, for one more poll interval-ish grace of 60 s so its result can be read.
  if (task.terminalAt === null) return null;
  return saturated(Math.max(byTtl, task.terminalAt + 60_000));
}

function saturated(at: number): number {
  return Math.min(at, Number.MAX_SAFE_INTEGER);
}

export function isExpired(task: TaskRecord, now: number): boolean {
  const at = expiresAt(task);
  return at !== null && now >= at;
}
