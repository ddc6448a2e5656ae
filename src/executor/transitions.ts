/**
 * The allowed moves between local states: data, checked by `next()` on every state change, by the
 * ledger on every write, and by the property tests on every step they take.
 *
 * A step that keeps the state (a poll answered `working`, a retried fetch) is not a transition and is
 * not listed. Edges beyond the graph of docs/calling-tools.md carry a comment saying why a correct protocol needs them.
 */
import type { LocalState } from './operation.js';

export const TRANSITIONS = {
  SUBMITTING: [
    'WORKING',
    'SUBMISSION_UNKNOWN',
    // Added: the server answered the create request with a definitive error (invalid arguments, key
    // conflict, capability missing). An answer is proof that nothing was created; lost or 5xx answers
    // are `submit_lost` and go to SUBMISSION_UNKNOWN instead.
    'NEVER_CREATED',
    // Added: the create answer already shows the task terminal; its result is fetched at once.
    'TERMINAL_OBSERVED',
    // Added (C12): the server answered the call synchronously with its result (a plain
    // CallToolResult to a call that offered a task): that answer, verified, is the receipt.
    'ACCEPTED',
    // Added (C12): a synchronous answer that fails verification (`validateResult`) cannot be fetched
    // again (there is no task) and the tool ran: never NEVER_CREATED, left to an operator. Also a plain
    // call (no submission key) whose answer was lost, or on the wire when the executor died: it may
    // have run and its key names nothing, so no lookup may settle it (`plain_call_lost`).
    'UNKNOWN',
  ],
  WORKING: [
    'INPUT_REQUIRED',
    'CANCEL_REQUESTED',
    'TERMINAL_OBSERVED',
    // Added (DESIGN "(404 / expiry) -> ... UNKNOWN"): the task id answers 404 while we still wait.
    'UNKNOWN',
  ],
  INPUT_REQUIRED: [
    'WORKING',
    'CANCEL_REQUESTED',
    'TERMINAL_OBSERVED',
    // Added: 404 while paused on input, as from WORKING.
    'UNKNOWN',
  ],
  SUBMISSION_UNKNOWN: [
    'WORKING',
    'NOT_FOUND_SAFE',
    // Added: the server cannot look keys up, so the doubt can only be settled by hand (C4 keeps the
    // record queryable by its submission key). A new key is never generated here (C5).
    'UNKNOWN',
    // Added: the key lookup found the task already terminal; its result is fetched at once.
    'TERMINAL_OBSERVED',
  ],
  NOT_FOUND_SAFE: [
    // Added: the key lookup proved (and burned, S6) that nothing was created, which is the only case
    // where resubmitting is allowed. Same operation and call node, a new key.
    'SUBMITTING',
    // Added: the proof is kept but the call is not resubmitted (policy, rollback stops new
    // operations): the settled, non-advancing outcome.
    'NEVER_CREATED',
  ],
  CANCEL_REQUESTED: [
    'CANCELLED_ACCEPTED',
    'TERMINAL_OBSERVED',
    // Added: 404 while the cancel is outstanding.
    'UNKNOWN',
  ],
  TERMINAL_OBSERVED: [
    'FETCHING_RESULT',
    // Added: 404 after expiry before the fetch started: the observed terminal status is the receipt.
    'EXPIRED_WITH_RECEIPT',
    // Added: 404 before expiry (task id misuse, lost server state).
    'UNKNOWN',
  ],
  FETCHING_RESULT: [
    'ACCEPTED',
    // Added: the result was purged (404 after expiry) before a verified copy arrived.
    'EXPIRED_WITH_RECEIPT',
    // Added: 404 before expiry, a result that stays unverifiable after `maxFetchAttempts`, or a result
    // whose status contradicts the observed terminal status: never accepted (C2), left to an operator.
    'UNKNOWN',
  ],
  ACCEPTED: [],
  CANCELLED_ACCEPTED: [
    // DESIGN "late effects after a won cancel": the cancelled receipt stays the node's only receipt
    // (C1, C3); this move only records that the work may have had effects after the cancel won.
    'EFFECT_RECONCILIATION_REQUIRED',
  ],
  NEVER_CREATED: [
    // Added: a caller may still resubmit a proven never-created call with a fresh key (as from
    // NOT_FOUND_SAFE). This edge is why NEVER_CREATED writes no receipt: a later ACCEPTED would be a
    // second one (C1).
    'SUBMITTING',
  ],
  EXPIRED_WITH_RECEIPT: [],
  UNKNOWN: [
    // Added: reconciliation by submission key found the task again.
    'WORKING',
    // Added: found again while a cancel had been requested: the cancel intent (generation) survives.
    'CANCEL_REQUESTED',
    // Added: the key lookup proves the task was never created (only when no task id was ever acked).
    'NEVER_CREATED',
    // Added: found again already terminal (a completion, or no cancel requested): its result is fetched at once.
    'TERMINAL_OBSERVED',
  ],
  EFFECT_RECONCILIATION_REQUIRED: [],
} as const satisfies Record<LocalState, readonly LocalState[]>;

/**
 * States entered only through `Ledger.acceptTerminal`, which writes the receipt (and the outbox row)
 * in the same transaction as the state. `Ledger.apply` refuses to enter them.
 */
export const RECEIPT_WRITING_STATES = ['ACCEPTED', 'CANCELLED_ACCEPTED', 'EXPIRED_WITH_RECEIPT'] as const;
export type ReceiptWritingState = (typeof RECEIPT_WRITING_STATES)[number];

/** States whose call node holds a receipt. Once in this set an operation never leaves it. */
export const RECEIPTED_STATES = [...RECEIPT_WRITING_STATES, 'EFFECT_RECONCILIATION_REQUIRED'] as const;
export type ReceiptedState = (typeof RECEIPTED_STATES)[number];

/** States that need no further work from the executor (receipted, or proven never created). */
export const SETTLED_STATES = [...RECEIPTED_STATES, 'NEVER_CREATED'] as const;

/** States with work in flight: what a restarted or rolled-back executor takes over. */
export const IN_FLIGHT_STATES = [
  'SUBMITTING',
  'SUBMISSION_UNKNOWN',
  'WORKING',
  'INPUT_REQUIRED',
  'CANCEL_REQUESTED',
  'TERMINAL_OBSERVED',
  'FETCHING_RESULT',
  'NOT_FOUND_SAFE',
  'UNKNOWN',
] as const satisfies readonly LocalState[];

/**
 * Whether `TRANSITIONS` allows the move from `from` to `to` (a state kept is no transition).
 *
 * @example
 * ```ts
 * canTransition('SUBMITTING', 'WORKING'); // true
 * canTransition('ACCEPTED', 'WORKING'); // false: a receipted operation never leaves its state
 * ```
 */
export function canTransition(from: LocalState, to: LocalState): boolean {
  return (TRANSITIONS[from] as readonly LocalState[]).includes(to);
}

export function isReceiptWriting(state: LocalState): state is ReceiptWritingState {
  return (RECEIPT_WRITING_STATES as readonly LocalState[]).includes(state);
}

/**
 * Whether the operation's call node holds a receipt (`RECEIPTED_STATES`); once true, it stays true.
 *
 * @example
 * ```ts
 * isReceipted('CANCELLED_ACCEPTED'); // true
 * isReceipted('NEVER_CREATED'); // false: settled, but proven never created, so no receipt
 * ```
 */
export function isReceipted(state: LocalState): state is ReceiptedState {
  return (RECEIPTED_STATES as readonly LocalState[]).includes(state);
}

export function isSettled(state: LocalState): boolean {
  return (SETTLED_STATES as readonly LocalState[]).includes(state);
}
