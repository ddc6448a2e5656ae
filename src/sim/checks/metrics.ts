/** The figures of one series that the gate table sums (polls, cancel confirmation, doubt, outbox). */
export interface SeriesMetrics {
  readonly operations: number;
  readonly divergences: number;
  readonly secondOperations: number;
  /** Submissions of a call node beyond the first that reached the server (retries, duplicates). */
  readonly duplicateSubmissions: number;
  /** Status reads of clean operations (no fault touched them), and what an ideal poller needs. */
  readonly polls: number;
  readonly idealPolls: number;
  readonly maxPollsPerSecond: number;
  readonly cancelConfirmMs: readonly number[];
  /**
   * The same stretches less the time no client could use: inside a Retry-After the server sent for
   * the operation (C6), while the server or the executor was down, and while an expiry partition
   * cut the operation's task off. What remains is the executor's own share of the confirmation.
   */
  readonly cancelConfirmOwnMs: readonly number[];
  readonly unknownReconcileMs: readonly number[];
  /**
   * The same stretches, except that one still UNKNOWN at the series end because the executor handed
   * it to an operator (`handedOver`: nothing it may send can settle it) is timed to that hand-over,
   * its last step, instead of to the series end (which only says how long the series ran after it).
   * A stretch still in doubt that was not handed over is timed to the end as in the raw figure.
   */
  readonly unknownReconcileOwnMs?: readonly number[];
  /** Stretches of `unknownReconcileOwnMs` that ended with the hand-over. */
  readonly unknownHandedOver?: number;
  /**
   * On a wire without key lookup: lost submissions the executor listed as UNKNOWN, which only an
   * operator can settle (their time to the listing is in `unknownReconcileMs`).
   */
  readonly unknownByHand?: number;
  /** Operations the executor left for an operator because the server contradicted itself (C13). */
  readonly contradictions?: number;
  readonly outboxRows: number;
  readonly outboxTraced: number;
}

/** The metrics of a series that measured nothing (one whose run threw). */
export const NO_METRICS: SeriesMetrics = {
  operations: 0,
  divergences: 0,
  secondOperations: 0,
  duplicateSubmissions: 0,
  polls: 0,
  idealPolls: 0,
  maxPollsPerSecond: 0,
  cancelConfirmMs: [],
  cancelConfirmOwnMs: [],
  unknownReconcileMs: [],
  outboxRows: 0,
  outboxTraced: 0,
};
