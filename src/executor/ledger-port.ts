/**
 * The client-side ledger: one port, two backends (memory, SQLite), one conformance suite
 * (`describeLedger` in `mcp-terminus/testing`).
 *
 * Contract, for every implementation:
 * - Every method that resolves has committed durably.
 * - `apply` is compare-and-set on `revision`: two interpreters can never both step one record.
 * - `acceptTerminal` is THE single acceptance point (C1, C7): one transaction that matches the stored
 *   operation, then writes the new record, the receipt and (unless shadow) exactly one outbox row.
 * - Writes are fenced by the executor epoch: a record whose `executionEpoch` is not the ledger's
 *   current epoch is refused with `lease_lost` (rollback, DESIGN "Rollout and rollback").
 * - `now` is always passed in; ledgers never read the wall clock.
 */
import type { Acceptance } from './effects.js';
import type { LocalState, ReceiptStatus, ToolOperation } from './operation.js';

/**
 * States `prune` may delete: receipted and done with, or proven never created. Not
 * EFFECT_RECONCILIATION_REQUIRED (an operator must look at it first) and nothing in flight.
 */
export const PRUNABLE_STATES = [
  'ACCEPTED',
  'CANCELLED_ACCEPTED',
  'EXPIRED_WITH_RECEIPT',
  'NEVER_CREATED',
] as const satisfies readonly LocalState[];

/** Default ledger file; the CLI creates the folder. */
export const DEFAULT_LEDGER_PATH = './.terminus/ledger.db';

export interface Ledger {
  /**
   * Stores a new operation (revision 1), or returns the existing one for the same call node when
   * the request digest matches (`created: false`; a retried call never makes a second operation, C5).
   * Rejects `operation_conflict` when the call node exists with another digest or the submission key
   * is used by another operation, and `lease_lost` when `executionEpoch` is not the current epoch.
   */
  create(record: ToolOperation): Promise<CreateOperationOutcome>;

  load(operationId: string): Promise<ToolOperation | null>;
  loadByCallNode(callNodeId: string): Promise<ToolOperation | null>;

  /** Operations in any of `states`, oldest update first. */
  listByState(states: readonly LocalState[], limit: number): Promise<ToolOperation[]>;

  /**
   * Writes one non-accepting step: the stored revision must equal `expectedRevision` (else
   * `revision_conflict`), the state change must be in `TRANSITIONS` and must not enter a
   * receipt-writing state (else `invalid_argument`; use `acceptTerminal`), identity fields must not
   * change (else `invalid_argument`). Resolves with the record as stored (revision + 1).
   */
  apply(step: AppliedStep): Promise<ToolOperation>;

  /**
   * The single acceptance point. If the call node already has a receipt, returns it and writes
   * nothing (C1). Otherwise, in one transaction: checks the revision (`revision_conflict`), the epoch
   * (`lease_lost`), then that the acceptance matches the stored operation (call node, request digest,
   * task id, tool version, execution epoch, cancel generation, terminal status, result digest, the
   * move into a receipt-writing state allowed by `TRANSITIONS`; else `acceptance_mismatch`), and
   * writes the record, the receipt and one outbox row (none for shadow operations).
   */
  acceptTerminal(input: AcceptTerminalInput): Promise<AcceptOutcome>;

  getReceipt(callNodeId: string): Promise<Receipt | null>;

  /** Outbox rows not yet acknowledged, oldest first. */
  listOutbox(limit: number): Promise<OutboxRow[]>;
  /** Marks a row delivered downstream; true the first time, false if unknown or already acknowledged. */
  acknowledgeOutbox(outboxId: number, now: number): Promise<boolean>;

  /** The executor epoch every write is fenced by; starts at 0. */
  currentEpoch(): Promise<number>;
  /** Rollback: raises the epoch by one and returns it. In-flight records must adopt it (`rollback` event). */
  bumpEpoch(): Promise<number>;

  /** C4: by the current or any earlier submission key of an operation. */
  findBySubmissionKey(submissionKey: string): Promise<ToolOperation | null>;
  /** C4: task ids are unique per server only, so several operations may share one. */
  findByTaskId(taskId: string): Promise<ToolOperation[]>;

  /**
   * Deletes up to `limit` operations in `PRUNABLE_STATES` last updated before `updatedBefore`
   * (oldest first), each with its receipt, outbox row and submission keys, in one transaction.
   * An operation whose outbox row is not acknowledged is kept (downstream has not taken its
   * receipt yet, C7). Resolves with the ids deleted. A pruned call node is forgotten: submitting it
   * again creates a new operation.
   */
  prune(input: PruneInput): Promise<string[]>;

  close(): Promise<void>;
}

export interface PruneInput {
  readonly updatedBefore: number;
  readonly limit: number;
  /** Resolve with the ids `prune` would delete, oldest first, and delete nothing (`ops prune --dry-run`). */
  readonly dryRun?: boolean;
}

export type CreateOperationOutcome = { readonly created: boolean; readonly operation: ToolOperation };

export interface AppliedStep {
  /** The record `next()` returned. Its `revision` is ignored; the ledger sets it. */
  readonly record: ToolOperation;
  readonly expectedRevision: number;
  /**
   * False for a bookkeeping step (`mustBeDurable`: only a read or a timer follows it): the ledger
   * may commit it without waiting for the disk (SQLite WAL `synchronous=NORMAL`, PostgreSQL
   * `synchronous_commit = off`). It survives a crash of the process; a power loss may roll back
   * such steps, never a durable one nor past one (the log is sequential: the next durable commit
   * flushes them in order). Default true.
   */
  readonly durable?: boolean;
}

export interface AcceptTerminalInput {
  /** From `Ids.unique('rcpt')`. */
  readonly receiptId: string;
  /** The record `next()` returned together with the `accept_terminal` effect. */
  readonly record: ToolOperation;
  readonly expectedRevision: number;
  readonly acceptance: Acceptance;
  readonly now: number;
}

export type AcceptOutcome =
  | { readonly accepted: true; readonly receipt: Receipt; readonly operation: ToolOperation }
  /** A receipt already existed for the call node; nothing was written. */
  | { readonly accepted: false; readonly receipt: Receipt };

/** The terminal receipt of a call node (at most one, C1). */
export interface Receipt {
  readonly id: string;
  readonly callNodeId: string;
  readonly operationId: string;
  readonly taskId: string;
  readonly status: ReceiptStatus;
  readonly resultDigest: string | null;
  /** completed: the result; failed: the error; cancelled: null (audit only); expired: `{ observedStatus }`. */
  readonly payload: unknown;
  readonly epoch: number;
  readonly cancelGeneration: number;
  readonly shadow: boolean;
  readonly acceptedAt: number;
  /**
   * C12: true when the server answered the call itself synchronously (a plain `CallToolResult`, no
   * task): the receipt is that answer, verified like a fetched result; `taskId` is then empty.
   */
  readonly immediate?: boolean;
}

/** One "ready" row for downstream: every advance traces to exactly one receipt (C7). */
export interface OutboxRow {
  readonly id: number;
  readonly receiptId: string;
  readonly callNodeId: string;
  readonly operationId: string;
  readonly status: ReceiptStatus;
  readonly createdAt: number;
  readonly acknowledgedAt: number | null;
}
