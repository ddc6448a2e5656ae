/**
 * What `next()` asks the interpreter to do, as data. The interpreter persists the new record first
 * (one ledger transaction) and only then performs the effects, in order.
 */
import type { LocalState, ReceiptStatus, WireStatus, Evidence } from './operation.js';

/** Everything `Ledger.acceptTerminal` matches before it writes a receipt (C1, C2, C7). */
export interface Acceptance {
  readonly operationId: string;
  readonly callNodeId: string;
  readonly requestDigest: string;
  readonly taskId: string;
  readonly toolVersion: string;
  readonly executionEpoch: number;
  readonly cancelGeneration: number;
  readonly status: ReceiptStatus;
  /** Digest of `payload`; required for completed/failed, null for cancelled and expired. */
  readonly resultDigest: string | null;
  /** completed: the result; failed: the error; cancelled: null; expired: `{ observedStatus }`. */
  readonly payload: unknown;
  /** C12: the synchronous answer to the submission itself (no task: `taskId` is empty). */
  readonly immediate?: boolean;
}

export type Effect =
  | { readonly type: 'send_submit'; readonly submissionKey: string }
  | { readonly type: 'lookup_key'; readonly submissionKey: string }
  /** Fire a `wake` event with `dueAt = atMs`. At most one timer matters: a newer one supersedes. */
  | { readonly type: 'schedule_wake'; readonly atMs: number; readonly purpose: 'poll' | 'retry' | 'deadline' }
  | { readonly type: 'poll_status'; readonly taskId: string; readonly seq: number }
  | { readonly type: 'fetch_result'; readonly taskId: string }
  | { readonly type: 'send_cancel'; readonly taskId: string; readonly generation: number }
  /** Hand the round's requests to the approval gate (C10); answers come back as `input_answered`. */
  | { readonly type: 'ask_approval'; readonly round: number; readonly requests: Readonly<Record<string, unknown>> }
  | {
      readonly type: 'send_input';
      readonly taskId: string;
      readonly round: number;
      readonly responses: Readonly<Record<string, unknown>>;
    }
  /**
   * Perform this step through `Ledger.acceptTerminal` (receipt + outbox row in the same transaction)
   * instead of `Ledger.apply`.
   */
  | { readonly type: 'accept_terminal'; readonly acceptance: Acceptance }
  /** Surface an UNKNOWN to the operator queue (C4). */
  | { readonly type: 'record_unknown'; readonly evidence: Evidence }
  /** Surface possible effects after a won cancel (C3); the cancelled receipt stands. */
  | { readonly type: 'record_late_effect'; readonly evidence: Evidence }
  /** The submission was proven never created: the caller may resubmit with a fresh key or abandon. */
  | { readonly type: 'offer_resubmit'; readonly priorSubmissionKey: string }
  /** Stop waiting locally (C9). The server task is untouched: no cancel is sent. */
  | { readonly type: 'stop_waiting'; readonly reason: 'budget' | 'local_timeout' | 'disconnect' }
  | { readonly type: 'emit_status'; readonly state: LocalState; readonly serverStatus: WireStatus | null };

export type EffectType = Effect['type'];
