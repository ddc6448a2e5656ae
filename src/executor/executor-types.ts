/**
 * Public types of the executor API (`createExecutor`). The executor is the interpreter of the pure
 * operation machine (`machine.ts`): every event is stepped, persisted through the `Ledger`, and only
 * then are its effects performed through the operation's `ClientWire`.
 */
import type { Clock, Ids, Logger, Random } from '../core/ports.js';
import type { WireName } from '../core/task.js';
import type { Ledger, Receipt } from './ledger-port.js';
import type { LocalState, OperationPolicy, SessionBinding, WireStatus } from './operation.js';
import type { ClientWire, LogLine, LogPage, ServerEvent, WireFailure, WireStatusAnswer } from './wire-port.js';

/**
 * Returns the wire for a server name. `wire` is set when an existing operation is resumed: the
 * operation MUST be driven by the wire that created it (its record names it); absent on a new submit,
 * where the connector chooses (by negotiation or configuration). `session` is set when the resumed
 * operation was created in an HTTP session (2025-11-25, SEP-1391): a connector SHOULD continue it
 * (`connectServer(target, { wire, session })`), since a server that binds tasks to their session
 * knows the task nowhere else. Called once per (server, wire, session); the executor caches the
 * answer and closes it on `close()`.
 */
export type Connector = (server: string, wire?: WireName, session?: SessionBinding) => Promise<ClientWire>;

export interface ExecutorOptions {
  /** Where every operation, receipt and outbox row lives. Not closed by `close()`: the caller owns it. */
  readonly ledger: Ledger;
  readonly connect: Connector;
  /**
   * The credential this executor's connections to `server` carry (the secret itself, such as a
   * bearer token, or a stable name of its principal, such as a JWT's issuer and subject), null for
   * none. Given, each new operation records a salted fingerprint of it (never the credential), and
   * an operation recorded under another one is refused with `ExecutorError('identity_mismatch')`
   * before anything is sent: `attach`, `resume` (which skips it), a `submit` of its call node, logs.
   * Not given: no operation is checked.
   */
  readonly credentialOf?: (server: string) => string | null;
  readonly clock: Clock;
  readonly random: Random;
  readonly ids: Ids;
  readonly logger?: Logger;
  /**
   * Requests per second across ALL operations of this executor (C6): every submit, poll, fetch,
   * cancel, lookup and input send takes a token first. Default 20. `Infinity` disables the cap.
   */
  readonly qps?: number;
  /** Tokens the bucket may hold (a burst after idling). Default 1: never more than `qps` in any second, plus one. */
  readonly qpsBurst?: number;
  /**
   * Wait budget of a waiter (`submit`, `attach`, `resume`) that names none; `null` = unbounded.
   * Default 1 hour. It bounds that waiter only (C11): a later waiter starts its own.
   */
  readonly defaultBudgetMs?: number | null;
  /** Poll/back-off policy overrides stored on every new operation (defaults: `DEFAULT_POLICY`). */
  readonly policy?: Partial<Omit<OperationPolicy, 'deadlineAt'>>;
  /**
   * C10: called once per request of an input round; its reply (an `ElicitResult`, say) is bound to
   * that round and key. Default: answers `{ action: 'cancel' }`, as the MCP clients do without a UI.
   * A throw leaves the request unanswered until the next `resume()`.
   */
  readonly approvalGate?: (request: ApprovalRequest) => Promise<unknown>;
  /**
   * Runs on a fetched `completed` result before acceptance. A throw means "not accepted": the result
   * counts as unverifiable (refetched, then UNKNOWN after `maxFetchAttempts`), and the error is logged.
   * A synchronous answer (C12) cannot be fetched again: refused, it goes to UNKNOWN at once.
   */
  readonly validateResult?: (result: Record<string, unknown>, context: ValidationContext) => void | Promise<void>;
  /**
   * Follow operations by their task's ordered events where the server serves them (default true):
   * each status read is an events read from the cursor kept in the ledger. False: status reads
   * (`tasks/get`) only, as against a server without events.
   */
  readonly followEvents?: boolean;
  /** Shadow mode per tool: recorded and receipted but never put in the outbox. Default: none. */
  readonly shadow?: (tool: string) => boolean;
  /**
   * Percentage (0-100) of call nodes this executor takes; the others are refused with
   * `ExecutorError('not_in_rollout')` so the caller keeps its old path. Decided by a hash of the call
   * node id, so a retried call node always gets the same answer. Default 100.
   */
  readonly rolloutPercent?: number;
  /** A proven never-created submission is resubmitted under a fresh key (default true), else left NEVER_CREATED. */
  readonly resubmitNeverCreated?: boolean;
  /**
   * Wires that take no new submissions: `submit` of a new call node whose connector answers one of
   * them rejects with `ExecutorError('wire_disabled')` before anything is written. Operations already
   * created on them keep being resumed, polled, fetched and cancelled until they end.
   */
  readonly disabledWires?: readonly WireName[];
}

export interface SubmitInput {
  /** The calling graph node; one operation and at most one receipt per call node (C1, C5). */
  readonly callNodeId: string;
  /** Server name, as the connector knows it. */
  readonly server: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** Tool descriptor version, matched at acceptance. Default `unversioned`. */
  readonly toolVersion?: string;
  /** This waiter's budget (ms) from now (C11); `null` = unbounded; default `defaultBudgetMs`. */
  readonly budgetMs?: number | null;
}

/** One status change of an operation, as `statuses()` yields it. */
export interface OperationStatus {
  readonly operationId: string;
  readonly callNodeId: string;
  /** Local state: executor bookkeeping, never a wire status. */
  readonly state: LocalState;
  /** Last status the server reported, or null. */
  readonly serverStatus: WireStatus | null;
  readonly taskId: string | null;
  readonly at: number;
  /** Local waiting stopped (budget, detach): the server task is untouched (C9). */
  readonly waitingStopped: boolean;
  /**
   * What the executor is doing for it now: polling, or retrying after a failure (`unreachable`: no
   * answer; `throttled`: 429/503; `retrying`: an answer it could not use), with the time of the next
   * attempt (ms since the epoch) and its number. Absent when nothing is being driven (settled,
   * paused on input, waiting stopped, in doubt with nothing left to try).
   */
  readonly activity?: OperationActivity;
  /**
   * The cancel's progress, once one was asked for (C8): `requested` (recorded), `delivered` (the
   * server acknowledged it), `confirmed` (a terminal status was seen after it; the state says which).
   */
  readonly cancel?: 'requested' | 'delivered' | 'confirmed';
  /** The last progress the server reported (kept in the ledger: shown again after a restart). */
  readonly progress?: { readonly done: number; readonly total?: number; readonly message?: string };
}

/** `OperationStatus.activity`. */
export type OperationActivity =
  | { readonly kind: 'polling' }
  | {
      readonly kind: 'unreachable' | 'throttled' | 'retrying';
      /** When the next attempt goes out (ms since the epoch; a Retry-After included). */
      readonly retryAt: number;
      /** Consecutive failures so far: the next attempt is retry number `attempt`. */
      readonly attempt: number;
      readonly reason: string;
    };

export interface CancelOutcome {
  /** CANCEL_REQUESTED was recorded (or will be, once the submission is acknowledged). */
  readonly requested: boolean;
  /** When not requested: why (`already_terminal`: a terminal status was seen first and wins). */
  readonly reason?: string;
}

export interface OperationHandle {
  readonly operationId: string;
  readonly callNodeId: string;
  /**
   * True when this handle joined an operation that already existed (`attach`, `resume`, or a
   * `submit` of a call node already in the ledger); false for the submit that created it.
   */
  readonly attached: boolean;
  /**
   * End of THIS waiter's budget (ms since the epoch), null = unbounded (C11). `result()` and
   * `statuses()` stop waiting there; the operation goes on, and a later waiter starts its own.
   */
  readonly deadlineAt: number | null;
  /**
   * The current status first, then every change (state, server status, activity, cancel, progress),
   * ending when the operation settles, when it is left UNKNOWN for manual reconciliation (as
   * `result()` rejects with `unknown`), or when this waiter stops waiting (its last status then says
   * `waitingStopped: true`).
   */
  statuses(): AsyncIterable<OperationStatus>;
  /**
   * The terminal receipt. Rejects with `ExecutorError` when the operation ends without one here, or
   * with `waiting_stopped` when this waiter's budget ends first (the operation is untouched: C9, C11).
   */
  result(): Promise<Receipt>;
  /** C8: records CANCEL_REQUESTED (compare-and-set on the cancel generation), then sends the cancel. */
  cancel(): Promise<CancelOutcome>;
  /** C9: stops local waiting only; the operation stays in the ledger for `resume()`. */
  detach(): Promise<void>;
  /**
   * The task's own log (issue 18), line by line, following until the server says `done` (the task
   * ended and every line was read); `{ follow: false }` ends once caught up. Reading is no effect on
   * the operation. Throws `ExecutorError` `no_logs` (the server keeps none) or `no_task`.
   *
   * @example
   * ```ts
   * for await (const line of op.logs({ after: 0 })) console.log(`#${line.seq} ${line.text}`);
   * ```
   */
  logs(options?: LogsOptions): LogFollower;
}

export interface ApprovalRequest {
  readonly operationId: string;
  readonly callNodeId: string;
  readonly taskId: string | null;
  readonly tool: string;
  readonly round: number;
  readonly key: string;
  /** The server's request (`{ method: 'elicitation/create', params }` on the Tasks extension). */
  readonly request: unknown;
  /** sha256 of the request, so a reviewer can bind an answer to exactly what was shown. */
  readonly requestDigest: string;
  /** End of the operation's wait budget (ms since the epoch), or null. */
  readonly deadlineAt: number | null;
}

export interface ValidationContext {
  readonly operationId: string;
  readonly callNodeId: string;
  readonly tool: string;
  /** The server's task id; empty for a synchronous answer to the call (C12: there is no task). */
  readonly taskId: string;
}

/** A receipt ready for downstream, with the outbox row it came from. */
export interface OutboxItem {
  readonly outboxId: number;
  readonly receipt: Receipt;
}

export interface Outbox extends AsyncIterable<OutboxItem> {
  /**
   * The next receipt not yet yielded by this executor and not acknowledged; waits for one. Each
   * receipt is yielded once per executor; unacknowledged ones are yielded again by a new executor on
   * the same ledger (after a crash nothing is lost; the consumer deduplicates by receipt id).
   */
  next(signal?: AbortSignal): Promise<OutboxItem>;
  /** Marks the receipt delivered downstream; true the first time. */
  ack(receiptId: string): Promise<boolean>;
}

/** A new waiter's budget (C11). */
export interface WaitOptions {
  /** Wait budget (ms) from now; `null` = unbounded; default `defaultBudgetMs`. */
  readonly budgetMs?: number | null;
}

export interface Executor {
  readonly epoch: number;
  /**
   * Submits a call, or, when the call node is already in the ledger with the same request, attaches
   * to that operation with this submit's budget (`attached: true`; never a second operation, C5).
   */
  submit(input: SubmitInput): Promise<OperationHandle>;
  /**
   * The handle of an operation this executor drives or has in its ledger, by call node, with no wait
   * budget of its own (the operation's current one applies). A settled one answers its receipt.
   */
  handle(callNodeId: string): Promise<OperationHandle | null>;
  /**
   * C11: a new waiter on the call node's operation, with a FRESH wait budget: an operation whose
   * earlier waiter gave up (budget, detach, a closed process) is driven again until it settles, this
   * budget ends, or the server's expiry does. A settled operation's handle answers its receipt; null
   * when the ledger has no operation for the call node.
   *
   * @example
   * ```ts
   * const op = await executor.attach('node-7', { budgetMs: 60_000 });
   * if (op !== null) console.log((await op.result()).status);
   * ```
   */
  attach(callNodeId: string, options?: WaitOptions): Promise<OperationHandle | null>;
  readonly outbox: Outbox;
  /**
   * Takes up every in-flight ledger operation (after a restart, from a rolled-back epoch, or whose
   * waiter gave up), each with a fresh wait budget (C11), and returns their handles.
   */
  resume(options?: WaitOptions): Promise<OperationHandle[]>;
  /** Stops new submissions, bumps the ledger epoch; this executor stops driving (its writes are fenced). */
  rollback(): Promise<number>;
  /** Stops all local work (no server cancels, C9) and closes the wires. The ledger stays open. */
  close(): Promise<void>;
  /**
   * The log of the ledger operation `operationId`, driven or not (a settled one too, while its server
   * keeps the task): as `OperationHandle.logs`. Never steps the operation's machine.
   */
  logs(operationId: string, options?: LogsOptions): LogFollower;
  /**
   * The ordered events of the ledger operation `operationId` (issue 32): each status change,
   * progress report, input round and log line once, in seq order, from `options.cursor`. Pass the
   * follower's `cursor` to a later call to go on after a broken stream or a restart without
   * repeats. Never steps the operation's machine. Throws `ExecutorError` `no_events` (a server that
   * is not ours) or `no_task`.
   *
   * @example
   * ```ts
   * const feed = executor.events(op.operationId);
   * for await (const event of feed) console.log(event.seq, event.kind);
   * // later, after a crash: executor.events(op.operationId, { cursor: savedCursor })
   * ```
   */
  events(operationId: string, options?: EventsOptions): EventFollower;
  /** One page of that log after `request.after` (default 0), at most `request.limit` lines: the bridge's read. */
  readLogs(operationId: string, request?: { readonly after?: number; readonly limit?: number }): Promise<LogPage>;
}

/** How `op.logs()` / `executor.logs()` read: from where, until when, how often. */
export interface LogsOptions {
  /** Start after this `seq` (a cursor from an earlier read); default 0, the whole log. */
  readonly after?: number;
  /** Ends the iteration (quietly) when aborted. */
  readonly signal?: AbortSignal;
  /** Keep reading until the server says `done` (default true); false ends once caught up. */
  readonly follow?: boolean;
  /** Wait between reads of a caught-up log, in ms; default `LOG_POLL_MS`. */
  readonly intervalMs?: number;
  /** Told of every failed read that will be retried, with the delay before the retry (ms). */
  readonly onRetry?: (failure: WireFailure, retryInMs: number) => void;
}

/**
 * The lines of a task's log, in `seq` order, each once. `next`, `dropped` and `status` are those of
 * the last page read. A gap in `seq` is lines the server dropped (its per-task bound) before they
 * were read.
 */
export interface LogFollower extends AsyncIterable<LogLine> {
  /** The cursor after the last line yielded: pass it as `after` to go on later without repeats. */
  readonly next: number;
  /** Lines the server dropped for this task, in total, as of the last page. */
  readonly dropped: number;
  /** The server's status of the task at the last page, or null before the first. */
  readonly status: WireStatusAnswer | null;
  /** True once the server said the log is complete (terminal, nothing after `next`). */
  readonly done: boolean;
}

/** How `executor.events()` reads: from where, until when, how often. */
export interface EventsOptions {
  /** Start after this cursor (from an earlier follower, a page or `_meta`); default: the first event. */
  readonly cursor?: string;
  /** Ends the iteration (quietly) when aborted. */
  readonly signal?: AbortSignal;
  /** Keep reading until the server says `done` (default true); false ends once caught up. */
  readonly follow?: boolean;
  /** Wait between reads of a caught-up sequence, in ms; default 1000. */
  readonly intervalMs?: number;
  /** Told of every failed read that will be retried, with the delay before the retry (ms). */
  readonly onRetry?: (failure: WireFailure, retryInMs: number) => void;
}

/** The events of a task in seq order, each once; `cursor` stands after the last one yielded. */
export interface EventFollower extends AsyncIterable<ServerEvent> {
  /** Pass as `cursor` to go on later (after a broken stream, a restart) without repeats or gaps. */
  readonly cursor: string | undefined;
  /** The seq of the last event yielded (0 before the first). */
  readonly seq: number;
  /** The server's status of the task at the last page, or null before the first. */
  readonly status: WireStatusAnswer | null;
  /** True once the server said the sequence is complete (terminal, nothing after the cursor). */
  readonly done: boolean;
}

export const EXECUTOR_ERROR_CODES = [
  'closed',
  'rolled_back',
  'not_in_rollout',
  'waiting_stopped',
  'never_created',
  'unknown',
  'superseded',
  'ledger_error',
  'no_server',
  'wire_disabled',
  /** Task logs: the server keeps none (method or route missing). */
  'no_logs',
  /** Ordered task events: the server keeps none (method or route missing: not our server). */
  'no_events',
  /** Task logs: the operation has no task the server knows (never named one, expired, unknown). */
  'no_task',
  /**
   * The server refused the credentials (HTTP 401/403). Nothing was changed by the refused request:
   * a refused submission is NEVER_CREATED (the answer is proof), anything else leaves the record as
   * it was and stops this executor's driving of it; pass other credentials and attach again.
   */
  'unauthorized',
  /**
   * The operation was submitted under another credential than this executor's (`credentialOf`):
   * refused before anything was sent, the record unchanged. The server would answer its task as
   * not found (S8), which proves nothing about the task.
   */
  'identity_mismatch',
] as const;
export type ExecutorErrorCode = (typeof EXECUTOR_ERROR_CODES)[number];

/**
 * Why the executor could not give a receipt or take a call; branch on `code`.
 *
 * @example
 * ```ts
 * try {
 *   const receipt = await handle.result();
 * } catch (error) {
 *   // Local waiting ended (budget, close): the server task goes on; attach again later (C9, C11).
 *   if (error instanceof ExecutorError && error.code === 'waiting_stopped') await executor.attach(callNodeId);
 *   else throw error;
 * }
 * ```
 */
export class ExecutorError extends Error {
  readonly code: ExecutorErrorCode;
  readonly state: LocalState | undefined;

  constructor(code: ExecutorErrorCode, message: string, options: { state?: LocalState; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ExecutorError';
    this.code = code;
    this.state = options.state;
  }
}
