/**
 * Everything that can happen to an operation, as data. The interpreter turns wire answers, timers and
 * caller commands into these and feeds them to `next()`.
 *
 * Every event except `rollback` carries `epoch`: the executor epoch under which the request was sent
 * or the command given. Events from an older epoch are ignored; from a newer one rejected (the record
 * must adopt it through `rollback` first).
 */
import type { TerminalStatus } from '../core/task.js';
import type { EventCursor, Progress, WireStatus } from './operation.js';

/** @inline */
interface Stamped {
  readonly epoch: number;
}

/**
 * What a server said about a task on creation or a key lookup.
 * @inline
 */
interface TaskSighting extends Stamped {
  readonly taskId: string;
  readonly status: WireStatus;
  readonly pollIntervalMs?: number;
  readonly expiresAt?: number | null;
  readonly serverEpoch?: number;
  /**
   * Digest of the terminal payload the answer inlined, where the wire's task object carries it (the
   * Tasks extension's key lookup): a report a later fetch is compared with (C13), as a status read's.
   */
  readonly resultDigest?: string;
}

/** Requests whose failure is retried with back-off (`submit` failures are `submit_lost` instead). */
export type RetriedRequest = 'poll' | 'fetch' | 'cancel' | 'lookup' | 'input';

export type OperationEvent =
  /** The interpreter is about to put the submission on the wire (recorded first, so a crash knows). */
  | ({ readonly type: 'submit_sent' } & Stamped)
  | ({ readonly type: 'submit_acked' } & TaskSighting)
  /** Timeout or connection drop before any answer: the task may or may not exist. */
  /** The adapter is about to call the tool plainly, without the submission key (C12). */
  | ({ readonly type: 'submit_unkeyed' } & Stamped)
  | ({
      readonly type: 'submit_lost';
      readonly reason: string;
      /** The lost request was a plain call without the submission key: a key lookup proves nothing (C12). */
      readonly unkeyed?: boolean;
    } & Stamped)
  /**
   * C12: the server answered the create request with the call's own result (no task). `digest` is
   * `digestOf(payload)` as received, recomputed by `next()`; `valid: false` when `validateResult`
   * refused it.
   */
  | ({
      readonly type: 'submit_completed';
      readonly payload: Record<string, unknown>;
      readonly digest: string;
      readonly valid: boolean;
    } & Stamped)
  /** MRTR: the create request was answered with an input round before any task exists. */
  | ({
      readonly type: 'submit_input_required';
      readonly requests: Readonly<Record<string, unknown>>;
      readonly requestState?: string;
    } & Stamped)
  /** A definitive error answer to the create request (not a timeout, not a 5xx). */
  | ({ readonly type: 'submit_rejected'; readonly code: string; readonly message: string } & Stamped)
  | ({ readonly type: 'key_lookup_found' } & TaskSighting)
  /** The server proved (and burned, S6) that no task ever used the key. */
  | ({ readonly type: 'key_lookup_never_created' } & Stamped)
  | ({ readonly type: 'key_lookup_unsupported' } & Stamped)
  /** A timer set by `schedule_wake` fired; `dueAt` names which one. */
  | ({ readonly type: 'wake'; readonly dueAt: number } & Stamped)
  | ({
      readonly type: 'status_observed';
      /** The `seq` of the `poll_status` effect this answers. */
      readonly seq: number;
      readonly status: WireStatus;
      readonly pollIntervalMs?: number;
      readonly expiresAt?: number | null;
      /** Outstanding server-to-client requests by key (input_required). */
      readonly inputRequests?: Readonly<Record<string, unknown>>;
      readonly serverEpoch?: number;
      /** The progress the server reported with this status, if any. */
      readonly progress?: Progress;
      /**
       * Digest of the terminal payload the status answer inlined (`digestOf` of what a fetch would
       * give), on wires whose status read carries it: the first read a later fetch is compared with (C13).
       */
      readonly resultDigest?: string;
      /** The status was read from the task's events: where the read left the cursor (kept with this step). */
      readonly eventCursor?: EventCursor;
      /** The server does not serve this task's events: follow it by status reads from now on. */
      readonly eventsOff?: true;
    } & Stamped)
  /**
   * A terminal outcome the adapter received unasked (the 2025-11-25 side channel's blocked
   * `tasks/result`): a report kept at once and compared with the first (C13). It moves nothing.
   */
  | ({ readonly type: 'terminal_heard'; readonly status: TerminalStatus; readonly resultDigest: string } & Stamped)
  /** A pushed status hint (notifications/tasks, a webhook). Never changes state by itself. */
  | ({ readonly type: 'notification'; readonly status?: WireStatus; readonly serverEpoch?: number } & Stamped)
  /** The approval gate's reply to one request of an input round (C10). */
  | ({
      readonly type: 'input_answered';
      readonly round: number;
      readonly key: string;
      readonly reply: unknown;
    } & Stamped)
  /** The server acknowledged replies for these keys. */
  | ({ readonly type: 'input_sent'; readonly round: number; readonly keys: readonly string[] } & Stamped)
  /** Compare-and-set: applies only if `expectedGeneration` is the record's current generation (C8). */
  | ({ readonly type: 'cancel_requested'; readonly expectedGeneration: number } & Stamped)
  /**
   * The cancel request was answered successfully. `status` is what the answer proves: `cancelled`
   * (2025-11-25 returns the task), a terminal status that won the race, or nothing (2026 extension's
   * empty ack, eventually consistent: keep polling).
   */
  | ({ readonly type: 'cancel_acked'; readonly generation: number; readonly status?: WireStatus } & Stamped)
  /** The cancel was refused because the task is already terminal (2025-11-25: -32602). */
  | ({
      readonly type: 'cancel_rejected_terminal';
      readonly generation: number;
      readonly status?: TerminalStatus;
    } & Stamped)
  | ({
      readonly type: 'result_fetched';
      readonly status: TerminalStatus;
      /** The result (completed), the JSON-RPC error (failed) or null. */
      readonly payload: unknown;
      /** sha256 of the canonical payload as received (`digestOf`); recomputed and compared by `next()`. */
      readonly digest: string;
      readonly truncated: boolean;
      readonly malformed: boolean;
      /** Why an unreadable answer was refused (the adapter's `malformed` message), when known. */
      readonly reason?: string;
    } & Stamped)
  /** The task id answered "not found". `afterExpiry` defaults to the record's own `expiresAt`. */
  | ({
      readonly type: 'not_found';
      readonly request?: RetriedRequest;
      readonly afterExpiry?: boolean;
      /** What the wire knows that explains it (`WireFailure.note`), added to the evidence. */
      readonly note?: string;
    } & Stamped)
  /** 429/503 or a lost request other than the submission: retried with back-off (C6). */
  | ({
      readonly type: 'request_failed';
      readonly request: RetriedRequest;
      readonly code: 429 | 503 | 'timeout' | 'network';
      readonly retryAfterMs?: number;
      /** What failed, for a person (`OperationStatus.activity.reason`); never branched on. */
      readonly reason?: string;
    } & Stamped)
  /** The wait budget ran out, a local timeout fired or the caller went away: stop waiting only (C9). */
  | ({ readonly type: 'budget_exhausted'; readonly reason: 'budget' | 'local_timeout' | 'disconnect' } & Stamped)
  /** Resubmit a proven never-created call under a fresh key (from `Ids`). */
  | ({ readonly type: 'resubmit'; readonly submissionKey: string } & Stamped)
  /** Keep the never-created proof and do not resubmit. */
  | ({ readonly type: 'abandon'; readonly reason: string } & Stamped)
  /**
   * The executor restarted (or re-attached after C9) and takes the record up again. `deadlineAt` is
   * the new waiter's wait deadline (C11: a budget belongs to a waiter, not to the operation): it
   * replaces the record's, so a record whose earlier waiter gave up is driven again. Absent: kept.
   */
  | ({ readonly type: 'resumed'; readonly deadlineAt?: number | null } & Stamped)
  /**
   * Another waiter attached to an operation this executor drives (C11). A record still being waited
   * for is driven until the later of the two deadlines (null = unbounded); one whose waiter gave up
   * is taken up again as on `resumed`.
   */
  | ({ readonly type: 'waiter_joined'; readonly deadlineAt: number | null } & Stamped)
  /** Rollback bumped the executor epoch; the executor that adopts in-flight records sends this. */
  | { readonly type: 'rollback'; readonly newEpoch: number; readonly deadlineAt?: number | null };

export type OperationEventType = OperationEvent['type'];
export type EventOf<T extends OperationEventType> = Extract<OperationEvent, { type: T }>;
