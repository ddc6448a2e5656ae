/**
 * The client-side ledger record `toolOperation.v1` (docs/calling-tools.md, "Executor states").
 *
 * Local states are the executor's own bookkeeping. They are never sent on a wire and never confused
 * with wire statuses: local states are UPPER_SNAKE literals, wire statuses lower-case, and the
 * `Disjoint` check below fails to compile if the two unions ever share a member.
 */
import type { TaskStatus, TerminalStatus, WireName } from '../core/task.js';

/** Every local state of an operation (the graph of docs/calling-tools.md, plus the outcomes of 404 / expiry). */
export const LOCAL_STATES = [
  'SUBMITTING',
  'WORKING',
  'INPUT_REQUIRED',
  'SUBMISSION_UNKNOWN',
  'NOT_FOUND_SAFE',
  'CANCEL_REQUESTED',
  'TERMINAL_OBSERVED',
  'FETCHING_RESULT',
  'ACCEPTED',
  'CANCELLED_ACCEPTED',
  'NEVER_CREATED',
  'EXPIRED_WITH_RECEIPT',
  'UNKNOWN',
  'EFFECT_RECONCILIATION_REQUIRED',
] as const;
export type LocalState = (typeof LOCAL_STATES)[number];

/** A status as a server reports it on the wire. Alias of the core task status, kept apart from `LocalState`. */
export type WireStatus = TaskStatus;

type Disjoint<A, B> = [Extract<A, B>] extends [never] ? true : false;
/** Compile-time guard: a value can never be both a local state and a wire status. */
const LOCAL_AND_WIRE_DISJOINT: Disjoint<LocalState, WireStatus> = true;
void LOCAL_AND_WIRE_DISJOINT;

const LOCAL_STATE_SET: ReadonlySet<string> = new Set(LOCAL_STATES);

/**
 * Narrows an untrusted string (a SQL column, a CLI flag) to a local state.
 *
 * @example
 * ```ts
 * isLocalState('WORKING'); // true
 * isLocalState('working'); // false: a wire status, never a local state
 * ```
 */
export function isLocalState(value: unknown): value is LocalState {
  return typeof value === 'string' && LOCAL_STATE_SET.has(value);
}

/** How a terminal receipt is classified. `expired` is the EXPIRED_WITH_RECEIPT outcome, never a success. */
export type ReceiptStatus = TerminalStatus | 'expired';

/** One state change. Steps that keep the state (a poll answered `working`) are not recorded here. */
export interface HistoryEntry {
  readonly from: LocalState;
  readonly to: LocalState;
  readonly event: string;
  readonly at: number;
}

/** Why an operation is (or was) in doubt; kept for the operator and for C4 queries. */
export interface Evidence {
  readonly at: number;
  readonly kind:
    | 'submit_lost'
    // C12: a plain call (no submission key) got no answer: it may have run, and no lookup can tell.
    | 'plain_call_lost'
    // C12: the tool makes no task and is being called plainly: from here on its key names nothing.
    | 'plain_call_sent'
    | 'key_lookup_unsupported'
    | 'not_found'
    | 'result_unverifiable'
    | 'result_status_mismatch'
    | 'never_created_after_ack'
    | 'late_completion'
    | 'submit_rejected'
    | 'task_id_replaced'
    // C13: the server reported another terminal status (or `working`) after one was observed.
    | 'terminal_status_changed'
    // C13: a result read again carried another digest than the one first read.
    | 'result_changed'
    // MRTR: the server asked a pre-task question again after the caller declined or cancelled it
    // (or asked more rounds than `MAX_PRE_TASK_ROUNDS`): not answered again, the call ends.
    | 'input_asked_again';
  readonly detail: string;
  /** C13 (and late completions): what the server said first, and what it said later, with when. */
  readonly observed?: ServerReport;
  readonly reported?: ServerReport;
}

/** One thing the server said about a task's end: a status and/or a result digest, and when (ms). */
export interface ServerReport {
  readonly status?: string;
  readonly resultDigest?: string;
  readonly at: number;
}

/**
 * The first terminal status the server reported for the task, when, and the digest of the first
 * result read with it (a status answer that inlines the result, or the first verified fetch). Never
 * overwritten: every later report is compared with it (C13).
 */
export interface ObservedTerminal {
  readonly status: 'completed' | 'failed' | 'cancelled';
  readonly at: number;
  readonly resultDigest?: string;
}

/** The input round an INPUT_REQUIRED operation is waiting on (C10). */
export interface InputState {
  /** Increments for every new set of server requests; replies must name it. 0 = none yet. */
  readonly round: number;
  /** Requests of the current round by server key; empty when no round is open. */
  readonly pending: Readonly<Record<string, unknown>>;
  /** Replies given by the approval gate for the current round but not yet acknowledged by the server. */
  readonly unsent: Readonly<Record<string, unknown>>;
  /** Every key ever acknowledged by the server, so a replayed request is never answered twice. */
  readonly answeredKeys: readonly string[];
}

/** Per-operation scheduling policy, stored on the record so a restart behaves the same (C6). */
export interface OperationPolicy {
  /** Absolute end of the total wait budget (ms); null = unbounded. Reaching it stops local waiting only (C9). */
  readonly deadlineAt: number | null;
  /** Used when the server suggests no interval. */
  readonly defaultPollIntervalMs: number;
  /** Floor and ceiling applied to the server's interval (a per-operation QPS cap). */
  readonly minPollIntervalMs: number;
  readonly maxPollIntervalMs: number;
  /** Jitter added on top of the interval, as a fraction of it: 0.1 keeps polls within 1.1x of ideal. */
  readonly jitterRatio: number;
  /** Exponential back-off for 429/503 and lost requests: base * 2^(n-1), capped. */
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** Unverifiable results (truncated, malformed, digest mismatch) tolerated before UNKNOWN. */
  readonly maxFetchAttempts: number;
  /**
   * Answered automatic key lookups from UNKNOWN before it is left to manual reconciliation; a lookup
   * lost on the wire is retried with the back-off and not counted.
   */
  readonly maxReconcileLookups: number;
  /**
   * Longest wait between status reads while a cancel is being confirmed, whatever the server's
   * interval (`nextCancelPoll`). Optional: records written before it existed use 1 000 ms.
   */
  readonly cancelPollIntervalMs?: number;
}

export const DEFAULT_POLICY: Omit<OperationPolicy, 'deadlineAt'> = {
  defaultPollIntervalMs: 1_000,
  minPollIntervalMs: 250,
  maxPollIntervalMs: 60_000,
  // 0.1: polls stay within the gate's 1.2x-of-ideal target even with the server interval rounded up.
  jitterRatio: 0.1,
  backoffBaseMs: 500,
  backoffMaxMs: 60_000,
  maxFetchAttempts: 8,
  maxReconcileLookups: 3,
};

export interface Attempts {
  /** Submissions put on the wire under the current key (reset by a resubmission). */
  readonly submit: number;
  readonly lookup: number;
  readonly poll: number;
  readonly fetch: number;
  readonly cancel: number;
  readonly input: number;
  /** Fetched results that failed verification (truncated, malformed, digest mismatch). */
  readonly unverifiedResults: number;
  /** Automatic key lookups from UNKNOWN the server answered (lost ones are not counted). */
  readonly reconcile: number;
  /** Consecutive throttled or lost requests; drives the back-off, reset by any answer. */
  readonly consecutiveFailures: number;
  /**
   * Consecutive 429/503 answers. A throttle is an answer from a reachable server, so its back-off
   * restarts from the base after an outage instead of continuing the outage's (capped at 60 s).
   * Optional: records written before it existed read as 0.
   */
  readonly consecutiveThrottles?: number;
}

/** `ToolOperation.preTaskInput`. */
export interface PreTaskInput {
  /** Numbered with the task's input rounds (`input.round`), so a stale gate answer names an old one. */
  readonly round: number;
  readonly requests: Readonly<Record<string, unknown>>;
  readonly replies: Readonly<Record<string, unknown>>;
  readonly requestState?: string;
}

/**
 * The HTTP session (`Mcp-Session-Id`) an operation was created in, on a sessionful wire (2025-11-25,
 * SEP-1391): a server that binds tasks to their session answers "not found" to any other, so a
 * resumed operation reuses it. The id is a bearer-like secret: it is never logged, and every
 * display of a record shows it through `redactOperation`.
 */
export interface SessionBinding {
  readonly id: string;
  /** The protocol version `initialize` negotiated for the session (sent as `MCP-Protocol-Version`). */
  readonly protocolVersion: string;
}

/** What a server reported of a task's progress (`done` of `total`, with its status message). */
export interface Progress {
  readonly done: number;
  readonly total?: number;
  readonly message?: string;
}

/** Why the executor is retrying: the request, how it failed, and the attempt the next try will be. */
export interface RetryCause {
  readonly request: 'submit' | 'poll' | 'fetch' | 'cancel' | 'lookup' | 'input';
  /** `429` / `503` (throttled), `network` / `timeout` / `lost` (unreachable), `unverifiable` (a bad result). */
  readonly code: string;
  readonly reason: string;
  /** Consecutive failures of this kind so far (1 = the first retry is pending). */
  readonly attempt: number;
  readonly at: number;
}

/** The ledger record of one long-running tool call. Times are epoch ms from the injected clock. */
/** A position in a task's ordered events: the server's opaque cursor and the seq it stands after. */
export interface EventCursor {
  readonly cursor: string;
  readonly seq: number;
}

export interface ToolOperation {
  readonly schema: 'toolOperation.v1';
  /** Local operation id (from `Ids`); stable across resubmissions. */
  readonly id: string;
  /** The calling graph node; at most one receipt per call node (C1). */
  readonly callNodeId: string;
  readonly requestDigest: string;
  readonly tool: { readonly name: string; readonly descriptorVersion: string };
  /** The tool arguments. */
  readonly body: Record<string, unknown>;
  /** Server task / operation id; null until the server answered the submission or a key lookup. */
  readonly taskId: string | null;
  readonly wire: { readonly name: WireName; readonly adapterVersion: string };
  /**
   * The server the call was sent to, as the executor's connector names it (additive, optional: a
   * resumed operation reconnects by it; records written before it existed have none).
   */
  readonly server?: string;
  /** Current idempotency key; replaced only after a proof of never-created (C5). */
  readonly submissionKey: string;
  /** Keys used by earlier, proven never-created submissions; still queryable (C4). */
  readonly priorSubmissionKeys: readonly string[];
  /** Polls issued and the newest one answered: answers older than `observed` are reordered and dropped. */
  readonly pollCursor: { readonly issued: number; readonly observed: number };
  /**
   * Where the driver stands in the task's ordered events, on a server that serves them: every event
   * up to `seq` was applied, in the step that wrote this (so after a crash, a broken stream or a
   * detach the next read starts here, and no event is applied twice or skipped). Optional: records
   * written before it existed, and operations followed by status reads, have none.
   */
  readonly eventCursor?: EventCursor | null;
  /**
   * The server stopped serving this task's events (or never did): the operation is followed by
   * status reads from then on. Optional: absent is false.
   */
  readonly eventsOff?: boolean;
  readonly lastServerStatus: WireStatus | null;
  /** Highest server execution epoch seen; older callbacks are ignored. */
  readonly serverEpoch: number | null;
  readonly pollIntervalMs: number | null;
  readonly input: InputState;
  /** Bumped by compare-and-set on every cancel request (C8). */
  readonly cancelGeneration: number;
  /** The generation the server last acknowledged; below `cancelGeneration` means a send is owed. */
  readonly cancelAckedGeneration: number;
  /**
   * When the cancel now on the wire went out (CANCEL_REQUESTED only): set at each send, null once
   * it was answered or failed, and after a restart (nothing is in flight then). While it is set the
   * status cadence goes on beside it, so a lost ack never holds the confirmation for a request
   * timeout. Optional: records written before it existed have none (read as null).
   */
  readonly cancelSentAt?: number | null;
  /** Executor epoch that owns the record; rollback raises it and older events are stale. */
  readonly executionEpoch: number;
  readonly expiresAt: number | null;
  /** sha256 of the verified result payload, set on acceptance. */
  readonly resultDigest: string | null;
  /** C13: the first terminal status observed (see `ObservedTerminal`). Optional: older records have none. */
  readonly observedTerminal?: ObservedTerminal | null;
  readonly state: LocalState;
  readonly history: readonly HistoryEntry[];
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly attempts: Attempts;
  readonly evidence: readonly Evidence[];
  /** Shadow mode: recorded and receipted, but never advances downstream (no outbox row). */
  readonly shadow: boolean;
  readonly policy: OperationPolicy;
  /** When the pending timer should fire; null = none. A wake for another instant is superseded. */
  readonly wakeAt: number | null;
  /** Set when local waiting stopped (budget, local timeout, disconnect: C9); the server task is untouched. */
  readonly waitingStoppedAt: number | null;
  /**
   * Earliest instant the server allows another request: the end of the newest 429/503 Retry-After
   * (C6). Kept on the record so every path (a cancel ack, an input ack, a resume after a crash)
   * honours it, not only the retry timer. Optional: records written before it existed have none.
   */
  readonly notBefore?: number | null;
  /**
   * The failure the pending retry answers (a lost, throttled or unverifiable request), null once a
   * request is answered again: what `OperationStatus.activity` shows while the executor retries.
   * Optional: records written before it existed have none.
   */
  readonly lastFailure?: RetryCause | null;
  /**
   * MRTR (SEP-2322): the input round the server asked for in answer to the submission itself, before
   * any task exists, and the replies given so far; the submission is retried with them. Its keys are
   * the server's MRTR keys, apart from a task's own `input` (independent namespaces). Optional.
   */
  readonly preTaskInput?: PreTaskInput | null;
  /**
   * MRTR: digests of the pre-task questions (key and request) the caller declined or cancelled, so
   * the same question asked again ends the call instead of being asked (and refused) without end.
   * Optional: records written before it existed have none.
   */
  readonly preTaskRefused?: readonly string[];
  /** The last progress the server reported; kept so a restarted executor shows it at once. Optional. */
  readonly progress?: Progress | null;
  /**
   * The salted fingerprint of the credential the operation was submitted under (`identity.ts`),
   * never the credential; fixed at creation. A waiter with another credential is refused before it
   * sends anything. Absent or null: submitted without one (any holder of its ids may drive it).
   */
  readonly identity?: string | null;
  /**
   * The HTTP session the operation was created in, on a sessionful wire; null or absent elsewhere
   * (2026-07-28, stdio, AIP-151) and in records written before it existed. A secret: see
   * `SessionBinding`.
   */
  readonly session?: SessionBinding | null;
  /** Ledger revision for compare-and-set; owned by the ledger, never by `next()`. */
  readonly revision: number;
}

export interface NewOperationInput {
  readonly id: string;
  readonly callNodeId: string;
  readonly requestDigest: string;
  readonly tool: { readonly name: string; readonly descriptorVersion: string };
  readonly body: Record<string, unknown>;
  readonly wire: { readonly name: WireName; readonly adapterVersion: string };
  readonly submissionKey: string;
  readonly executionEpoch: number;
  readonly now: number;
  /** Total wait budget in ms from `now`; null = unbounded. */
  readonly budgetMs: number | null;
  readonly shadow?: boolean;
  readonly policy?: Partial<Omit<OperationPolicy, 'deadlineAt'>>;
}

/**
 * A fresh record in SUBMITTING. Pure: ids and time come from the caller. The first effect to
 * perform for it is `send_submit` (see `initialEffects` in `machine.ts`).
 *
 * @example
 * ```ts
 * const record = newOperation({
 *   id: ids.unique('op'),
 *   callNodeId: 'run-42/step-3',
 *   requestDigest,
 *   tool: { name: 'build_report', descriptorVersion: 'unversioned' },
 *   body: { sections: 3 },
 *   wire: { name: wire.wire, adapterVersion: wire.version },
 *   submissionKey: ids.unique('key'),
 *   executionEpoch: 1,
 *   now: clock.now(),
 *   budgetMs: 60_000,
 * });
 * ```
 */
export function newOperation(input: NewOperationInput): ToolOperation {
  return {
    schema: 'toolOperation.v1',
    id: input.id,
    callNodeId: input.callNodeId,
    requestDigest: input.requestDigest,
    tool: input.tool,
    body: input.body,
    taskId: null,
    wire: input.wire,
    submissionKey: input.submissionKey,
    priorSubmissionKeys: [],
    pollCursor: { issued: 0, observed: 0 },
    lastServerStatus: null,
    serverEpoch: null,
    pollIntervalMs: null,
    input: { round: 0, pending: {}, unsent: {}, answeredKeys: [] },
    cancelGeneration: 0,
    cancelAckedGeneration: 0,
    cancelSentAt: null,
    executionEpoch: input.executionEpoch,
    expiresAt: null,
    resultDigest: null,
    state: 'SUBMITTING',
    history: [],
    createdAt: input.now,
    updatedAt: input.now,
    attempts: {
      submit: 0,
      lookup: 0,
      poll: 0,
      fetch: 0,
      cancel: 0,
      input: 0,
      unverifiedResults: 0,
      reconcile: 0,
      consecutiveFailures: 0,
    },
    evidence: [],
    shadow: input.shadow ?? false,
    policy: {
      ...DEFAULT_POLICY,
      ...input.policy,
      deadlineAt: input.budgetMs === null ? null : input.now + input.budgetMs,
    },
    wakeAt: null,
    waitingStoppedAt: null,
    notBefore: null,
    lastFailure: null,
    progress: null,
    revision: 0,
  };
}

/** What a display shows for a session id: that there is one, never the id. */
export const REDACTED_SESSION_ID = '<redacted>';

/**
 * The record with its session id replaced by `REDACTED_SESSION_ID`: what `ops show`, the ledger UI
 * and any other display print.
 * @example const shown = redactOperation(op); // op from ledger.load(id): shown.session.id is "<redacted>"
 */
export function redactOperation(op: ToolOperation): ToolOperation {
  if (op.session === undefined || op.session === null) return op;
  return { ...op, session: { ...op.session, id: REDACTED_SESSION_ID } };
}
