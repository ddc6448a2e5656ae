/**
 * The result of one `next()` call and the small builder the handlers use to make it. The builder
 * copies the record and only ever replaces nested objects, so the input record is never mutated.
 */
import { canTransition } from './transitions.js';
import type { Effect } from './effects.js';
import type { OperationEventType } from './events.js';
import type { Evidence, LocalState, ToolOperation } from './operation.js';
import { deadlineReached, type WakePlan } from './schedule.js';

/** Why an event changed nothing although it may legitimately arrive (late, duplicated, reordered). */
export type IgnoreReason =
  | 'stale_epoch'
  | 'stale_server_epoch'
  | 'reordered'
  | 'late_answer'
  | 'superseded_wake'
  | 'waiting_stopped'
  | 'settled'
  | 'stale_round'
  | 'replayed_input'
  | 'stale_generation'
  | 'already_stopped'
  | 'no_news'
  | 'read_in_flight'
  | 'polling_paused'
  | 'lookups_exhausted'
  // C12: the key never named the call (a plain call, a synchronous answer): its lookup settles nothing.
  | 'key_proves_nothing';

/** Why an event is not valid for the record at all (a caller or interpreter error). */
export type RejectReason =
  | 'future_epoch'
  | 'unissued_poll'
  | 'future_generation'
  | 'stale_generation'
  | 'no_task_id'
  | 'already_terminal'
  | 'settled'
  | 'in_doubt'
  | 'unknown_round'
  | 'round_closed'
  | 'unknown_input_key'
  | 'key_reused'
  | 'not_never_created'
  | 'not_submitting'
  | 'transition_not_allowed'
  | 'unknown_event';

export type StepResult =
  | { readonly outcome: 'applied'; readonly record: ToolOperation; readonly effects: readonly Effect[] }
  | {
      readonly outcome: 'ignored';
      readonly record: ToolOperation;
      readonly effects: readonly [];
      readonly reason: IgnoreReason;
    }
  | {
      readonly outcome: 'rejected';
      readonly record: ToolOperation;
      readonly effects: readonly [];
      readonly reason: RejectReason;
    };

export function ignored(record: ToolOperation, reason: IgnoreReason): StepResult {
  return { outcome: 'ignored', record, effects: [], reason };
}

export function rejected(record: ToolOperation, reason: RejectReason): StepResult {
  return { outcome: 'rejected', record, effects: [], reason };
}

/**
 * A cancel already requested is delivered and confirmed even after the caller stopped waiting (a
 * disconnect or local timeout, C9): the request is owed to the server (C8), and the caller finds the
 * receipt when it re-attaches. So is the doubt such a cancel fell into (a 404 sent it to UNKNOWN):
 * its key lookups are the confirmation going on. Gate seeds 720217 and 988501: a lookup lost while
 * detached armed no retry, and nothing was asked for 11-15 s, until the caller re-attached. The wait
 * budget still bounds it: past the deadline nothing is driven.
 */
export function drivesDetached(record: ToolOperation, now: number): boolean {
  const confirming =
    record.state === 'CANCEL_REQUESTED' || (DOUBTS.includes(record.state) && record.cancelGeneration > 0);
  return confirming && !deadlineReached(record, now);
}

/** Doubts a key lookup reconciles. */
const DOUBTS: readonly LocalState[] = ['UNKNOWN', 'SUBMISSION_UNKNOWN'];

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A working copy of one step. */
export class Draft {
  readonly base: ToolOperation;
  readonly now: number;
  readonly random: number;
  readonly record: Mutable<ToolOperation>;
  readonly effects: Effect[] = [];
  private readonly eventType: OperationEventType;

  constructor(base: ToolOperation, eventType: OperationEventType, now: number, random: number) {
    this.base = base;
    this.eventType = eventType;
    this.now = now;
    this.random = random;
    this.record = { ...base };
  }

  set(patch: Partial<ToolOperation>): this {
    Object.assign(this.record, patch);
    return this;
  }

  /** Moves to `state`; `done()` rejects the whole step if the table does not allow it. */
  moveTo(state: LocalState): this {
    this.record.state = state;
    return this;
  }

  emit(...effects: Effect[]): this {
    this.effects.push(...effects);
    return this;
  }

  countAttempt(kind: keyof ToolOperation['attempts'], by = 1): this {
    this.record.attempts = { ...this.record.attempts, [kind]: (this.record.attempts[kind] ?? 0) + by };
    return this;
  }

  resetFailures(): this {
    if (this.record.attempts.consecutiveFailures !== 0 || (this.record.attempts.consecutiveThrottles ?? 0) !== 0) {
      this.record.attempts = { ...this.record.attempts, consecutiveFailures: 0, consecutiveThrottles: 0 };
    }
    if ((this.record.lastFailure ?? null) !== null) this.record.lastFailure = null;
    return this;
  }

  addEvidence(kind: Evidence['kind'], detail: string, reports?: Pick<Evidence, 'observed' | 'reported'>): Evidence {
    const evidence: Evidence = { at: this.now, kind, detail, ...reports };
    this.record.evidence = [...this.record.evidence, evidence];
    return evidence;
  }

  /**
   * Arms the single timer, unless local waiting was stopped (C9): then nothing is scheduled, except
   * for a cancel still being confirmed (`drivesDetached`).
   */
  wake(plan: WakePlan): this {
    if (this.record.waitingStoppedAt !== null && !drivesDetached(this.record, this.now)) {
      this.record.wakeAt = null;
      return this;
    }
    this.record.wakeAt = plan.atMs;
    this.effects.push({ type: 'schedule_wake', atMs: plan.atMs, purpose: plan.purpose });
    return this;
  }

  /** Disarms the timer (a wake for the old instant will be ignored as superseded). */
  clearWake(): this {
    this.record.wakeAt = null;
    return this;
  }

  done(): StepResult {
    const from = this.base.state;
    const to = this.record.state;
    this.record.updatedAt = Math.max(this.base.updatedAt, this.now);
    if (from !== to) {
      if (!canTransition(from, to)) return rejected(this.base, 'transition_not_allowed');
      this.record.history = [...this.base.history, { from, to, event: this.eventType, at: this.now }];
      this.effects.push({ type: 'emit_status', state: to, serverStatus: this.record.lastServerStatus });
    }
    return { outcome: 'applied', record: this.record, effects: this.effects };
  }
}
