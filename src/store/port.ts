import type { LogBound, LogLine, LogPage, NewLogLine } from '../core/log.js';
import type { EventBound, OrderedEventPage } from '../core/task-events.js';
import type { WebhookEndpoint } from '../core/webhook.js';
import type { WebhookOutbox } from './outbox-port.js';
import type { InputRequest, LateOutcome, Progress, RpcError, TaskRecord, WireName } from '../core/task.js';

/**
 * The durable task store: one port, several backends (memory, SQLite, PostgreSQL), one conformance
 * suite (`describeTaskStore` in `mcp-terminus/testing`).
 *
 * Contract, for every implementation:
 * - Every method that resolves has committed durably (S1, S9): a `create` that resolved is readable
 *   by `get` from any process sharing the backend, after any crash.
 * - Terminal statuses are final, enforced by conditional writes inside the store (S2).
 * - Worker writes take a `Fence`; if the task's lease owner or epoch no longer match, the write
 *   changes nothing and rejects with `TerminusError('lease_lost')` (S3).
 * - Reads by a caller take the `owner`; a task of another owner, an unknown id and an expired task
 *   all answer `null` / `not_found` alike (S7, S8).
 * - `now` is always passed in by the caller (the injected clock); stores never read the wall clock.
 */
export interface TaskStore {
  /**
   * Creates a task, or returns the existing one for the same `(owner, submissionKey)` when the
   * request digest matches (S5). Rejects with `submission_key_conflict` when the digest differs and
   * `submission_key_burned` when the key was burned by `lookupKey` (S6).
   */
  create(input: NewTask): Promise<CreateOutcome>;

  /** The task if it exists, belongs to `owner` and has not expired at `now`; else null. */
  get(owner: string, id: string, now: number): Promise<TaskRecord | null>;

  /**
   * Looks a submission key up. An unused key is burned in the same transaction, so the answer
   * `never_created` is a proof: a later `create` with that key is refused (S6).
   */
  lookupKey(owner: string, submissionKey: string, now: number): Promise<KeyLookup>;

  /** The owner's unexpired tasks, newest first, paginated by an opaque cursor. */
  list(owner: string, query: ListQuery, now: number): Promise<TaskPage>;

  /**
   * Every owner's unexpired tasks, in `list`'s order and pages. For an operator's view (the
   * console's operator role), never for a wire: a caller's reads stay owner-scoped (S8).
   */
  listAllOwners(query: ListQuery, now: number): Promise<TaskPage>;

  /** Unexpired tasks counted by tool and status (only pairs with at least one), for a gauge read at scrape time. */
  countByStatus(now: number): Promise<TaskCount[]>;

  /**
   * Requests cancellation. A non-terminal task becomes `cancelled` in this write and for good (S4);
   * a terminal one is returned unchanged with `outcome: 'already_terminal'`. Rejects `not_found`.
   */
  cancel(owner: string, id: string, now: number): Promise<CancelOutcome>;

  /**
   * Stores input responses for keys that are outstanding; other keys are ignored. The task
   * returns to `working` when no request is left outstanding. Rejects `not_found`.
   */
  respond(owner: string, id: string, responses: Readonly<Record<string, unknown>>, now: number): Promise<TaskRecord>;

  // ---- runner side: claims and fenced writes --------------------------------------------------

  /**
   * Claims up to `limit` runnable tasks (non-terminal, lease absent or expired), setting the lease
   * and bumping the epoch by one per claim. Two concurrent claims never return the same epoch.
   * Each task carries the lease owner it had before this claim (`previousLeaseOwner`).
   */
  claim(request: ClaimRequest): Promise<ClaimedTask[]>;

  /**
   * Extends the lease. Resolves with the task as stored (so the runner sees a cancel); rejects
   * `lease_lost` if the fence no longer holds. A task made terminal by a cancel still heartbeats
   * successfully: the runner learns of the cancel from the returned status.
   */
  heartbeat(fence: Fence, leaseMs: number, now: number): Promise<TaskRecord>;

  /** Fenced progress/status message write (status unchanged). */
  progress(fence: Fence, progress: Progress, now: number): Promise<void>;

  /** Fenced checkpoint write; a re-run after a crash sees it as `lastCheckpoint`. */
  checkpoint(fence: Fence, data: unknown, now: number): Promise<void>;

  /**
   * Fenced: adds an outstanding input request under `key` and moves the task to `input_required`.
   * A key already present (outstanding or answered) is left as it is, so a re-run handler asking the
   * same question again does not issue a second request.
   */
  requestInput(fence: Fence, key: string, request: InputRequest, now: number): Promise<TaskRecord>;

  /**
   * Fenced terminal write. If the task is still non-terminal it becomes `completed`/`failed`
   * (`outcome: 'recorded'`). If a cancel already won, the outcome is kept only as `lateOutcome`
   * (`outcome: 'late'`, S4). Releases the lease either way.
   */
  finish(fence: Fence, outcome: FinishInput, now: number): Promise<FinishOutcome>;

  /**
   * Fenced (S3) like `progress`: appends `lines` to the task's log, numbered from the task's last
   * seq + 1, stamped with the fence's epoch and `now`, in one commit. Then, while the kept lines
   * exceed `bound`, the oldest are deleted and added to `dropped`. A terminal task's log is final:
   * rejects `already_terminal` (so a reader that saw a terminal status and the last seq has it all).
   * Resolves with the lines as stored.
   *
   * `skipped` (default 0) counts lines written before `lines` that never reached the store (the
   * writer's own bound dropped them on the way): they take the seq numbers just before `lines` and
   * are added to `dropped`, so seq still counts every line written and a reader sees the gap.
   */
  appendLog(
    fence: Fence,
    lines: readonly NewLogLine[],
    bound: LogBound,
    now: number,
    skipped?: number,
  ): Promise<LogLine[]>;

  /**
   * Up to `query.limit` (1..1000) lines with seq > `query.after`, oldest first, and the task as read
   * (before the lines, so a terminal task's lines up to `lastSeq` are all there). Null for an
   * unknown, foreign or expired task, as `get` (S7, S8).
   */
  readLog(owner: string, id: string, query: LogQuery, now: number): Promise<LogRead | null>;

  /**
   * Up to `query.limit` (1..1000) of the task's ordered events with seq > `query.after`, oldest
   * first, and the task as read (before the events, so a terminal task's events up to `lastSeq`
   * are all there). Null for an unknown, foreign or expired task, as `get` (S7, S8).
   *
   * Every write that changes what a client sees appends its events in its own commit, numbered
   * from the task's `eventSeq` + 1 with no gap (`core/task-events.ts`): `create` (status working),
   * `progress`, `requestInput` (input_requested, then status input_required when it changes),
   * `respond` (input_answered, then status working when it changes), `cancel` and `finish` (the
   * terminal status; a late outcome adds none), `appendLog` (one `log` event per line).
   */
  readEvents(owner: string, id: string, query: EventQuery, now: number): Promise<EventRead | null>;

  /** Fenced: gives the lease up without changing the status (graceful shutdown). */
  release(fence: Fence, now: number): Promise<void>;

  /** Deletes tasks expired at `now` (never a non-terminal one, S7), with their logs and events; returns how many. */
  sweepExpired(now: number, limit: number): Promise<number>;

  /**
   * Deletes up to `limit` submission-key tombstones (keys `lookupKey` burned, S6) burned at or
   * before `before`; returns how many. After that a create with such a key is accepted again: the
   * tombstone's retention is how long "never created" stays a proof. Keys a task used are kept.
   */
  sweepTombstones(before: number, limit: number): Promise<number>;

  /** How many non-terminal (`working`, `input_required`) tasks `owner` has, expired or not (T-79). */
  countLive(owner: string): Promise<number>;

  // ---- owner names: a migration when principals change form -------------------------------------

  /** How many tasks (expired or not) have an owner that starts with `prefix`. */
  countOwners(prefix: string): Promise<number>;

  /**
   * In one transaction, every task and submission key (used or a tombstone) whose owner starts with
   * `from` gets `to` in place of that prefix (`auth:alice` -> `token:alice`), except a task or key
   * whose new owner already holds the same submission key, which keeps its owner (S5: never two
   * tasks under one owner and key). Resolves with the tasks renamed. Nothing else changes: ids,
   * leases, epochs and statuses stay, so running handlers are not disturbed.
   */
  renameOwners(from: string, to: string): Promise<number>;
  /**
   * The webhook outbox (issue 32), where the backend has one (memory, SQLite and PostgreSQL do): the
   * rows its writes add for tasks created with `webhooks`, and their delivery records.
   */
  readonly webhooks?: WebhookOutbox;

  /**
   * Optional. Told when a caller starts (`true`) and stops (`false`) blocking on a task's next
   * change (a blocking result read, `waitForChange`). While anyone blocks, a store that holds a
   * runner's writes back to share a commit (SQLite's `commitDelayMs`) commits them at once: a
   * blocked caller is waiting for one of them. MUST NOT throw.
   */
  callerWaiting?(waiting: boolean): void;

  close(): Promise<void>;
}

/** Which lines `readLog` returns. */
export interface LogQuery {
  /** Lines with a seq above this; 0 for all. */
  readonly after: number;
  readonly limit: number;
}

/**
 * How a store keeps a task's `progress` and `log` events under its `EventBound`: the newest
 * `maxKept`, and `onDropped` told how many one write dropped (metrics; it MUST NOT throw).
 */
export interface AppendBound extends EventBound {
  readonly onDropped?: (count: number) => void;
}

/** Which events `readEvents` returns. */
export interface EventQuery {
  /** Events with a seq above this; 0 for all. */
  readonly after: number;
  readonly limit: number;
}

/** What `readEvents` answers: the task and its events page. */
export interface EventRead extends OrderedEventPage {
  readonly task: TaskRecord;
}

/** What `readLog` answers: the task and its log page. */
export interface LogRead extends LogPage {
  readonly task: TaskRecord;
}

export interface NewTask {
  readonly id: string;
  readonly owner: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly requestDigest: string;
  readonly submissionKey: string | null;
  readonly wire: WireName;
  readonly ttlMs: number | null;
  readonly keepAliveMs: number | null;
  readonly pollIntervalMs: number;
  readonly now: number;
  /** Initial status message, e.g. "queued". */
  readonly statusMessage?: string;
  /**
   * Create and claim in one commit: a task that is created (not an existing one returned for its
   * key) is stored already leased to `workerId` until `now + leaseMs`, at epoch 1, exactly as if
   * `claim` had taken it, so a task costs two sequential commits (create, finish) instead of three.
   * The runner asks for it only when it has a free slot to run the task at once.
   */
  readonly lease?: NewTaskLease;
  /**
   * Where the task's status events are delivered (issue 32): stored with the task, so each later
   * status change adds its outbox rows (one per endpoint whose event set takes it) in its own commit.
   */
  readonly webhooks?: readonly WebhookEndpoint[];
  /**
   * The owner's cap on unfinished tasks (T-79). When given, a create that would give the owner more
   * than `maxLive` non-terminal tasks is refused with `resource_exhausted` (`details.reason`
   * `too_many_active_tasks`, see `tooManyLive`), counted in the same write as the insert, so the
   * check costs no round trip of its own. Creates in flight together may each see the count before
   * the others, so the cap can be passed by their number. A task returned for its submission key
   * is returned whatever the count (S5).
   */
  readonly maxLive?: number;
}

/** The lease a task is created with (see `NewTask.lease`). */
export interface NewTaskLease {
  readonly workerId: string;
  readonly leaseMs: number;
}

export type CreateOutcome = { readonly created: boolean; readonly task: TaskRecord };

export type KeyLookup =
  | { readonly kind: 'found'; readonly task: TaskRecord }
  /** No task ever used the key for this owner; the key is now burned. */
  | { readonly kind: 'never_created' };

export interface ListQuery {
  readonly cursor?: string;
  /** 1..1000; the store clamps. */
  readonly limit: number;
  readonly status?: readonly TaskRecord['status'][];
  readonly wire?: WireName;
}

/** How many unexpired tasks of one tool are in one status. */
export interface TaskCount {
  readonly tool: string;
  readonly status: TaskRecord['status'];
  readonly count: number;
}

export interface TaskPage {
  readonly tasks: TaskRecord[];
  readonly nextCursor: string | null;
}

export type CancelOutcome = {
  readonly outcome: 'cancelled' | 'already_terminal';
  readonly task: TaskRecord;
};

export interface ClaimRequest {
  readonly workerId: string;
  readonly now: number;
  readonly leaseMs: number;
  readonly limit: number;
  /** Only tasks of these tools (the ones this node can run). */
  readonly tools: readonly string[];
}

/**
 * A task as one claim took it. The store keeps only the current lease owner, so the one this claim
 * replaced is known only here: the node that let its lease expire (a re-claim after a crash or a
 * stall), or null on a first claim and after a release (a released task has no owner).
 */
export interface ClaimedTask extends TaskRecord {
  readonly previousLeaseOwner: string | null;
}

/** What fences a worker's writes: the claim that made them (S3). */
export interface Fence {
  readonly taskId: string;
  readonly workerId: string;
  readonly epoch: number;
}

export type FinishInput =
  | { readonly status: 'completed'; readonly result: Record<string, unknown>; readonly resultDigest: string }
  | { readonly status: 'failed'; readonly error: RpcError; readonly statusMessage?: string };

export type FinishOutcome =
  | { readonly outcome: 'recorded'; readonly task: TaskRecord }
  | { readonly outcome: 'late'; readonly task: TaskRecord; readonly late: LateOutcome };
