/**
 * What the checkers of a series name (docs/guarantees.md): client invariants C1-C13, server invariants S1-S9,
 * terminal-state divergence, liveness and the cancel cadence, and the bounds they hold the executor to.
 * Each violation names its invariant, so a broken variant can be asserted to fail on the right one.
 */
import { DEFAULT_POLICY } from '../../executor/operation.js';

export const INVARIANTS = [
  'C1',
  'C2',
  'C3',
  'C4',
  'C5',
  'C6',
  'C7',
  'C8',
  'C9',
  'C10',
  'C11',
  'C12',
  'C13',
  'S1',
  'S2',
  'S3',
  'S4',
  'S5',
  'S6',
  'S7',
  'S8',
  'S9',
  'divergence',
  'liveness',
  'cancel cadence',
  // Webhooks and ordered events (issue 32, `delivery/checks.ts`): every terminal state delivered at
  // least once by its stable webhook-id, validly signed; an event reader sees each event once, gap-free.
  'webhooks',
  'events',
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  readonly invariant: Invariant;
  readonly detail: string;
}

/**
 * Status reads per operation allowed in any 1 s window: the policy floor (250 ms) allows 4 polls, plus
 * a burst of one (the immediate fetch after a terminal status, or the read after a restart), as the
 * executor's own token bucket defines its cap (`qpsBurst` 1: "never more than qps in any second, plus one").
 */
export const QPS_CAP = 1000 / DEFAULT_POLICY.minPollIntervalMs + 1;

/**
 * Longest silence allowed while a cancel is being confirmed on a tool whose server suggests a 30 s
 * poll interval: the executor's cadence is at most 1 s plus jitter, a lost request costs the 2 s
 * transport timeout and a retry at most 2 s more; 10 s is far from all of them and far below the
 * 30 s a cadence that followed the server would show (defect 7). Gaps a client must sit out
 * (Retry-After, downtime, an expiry partition) are not counted.
 */
export const CANCEL_CADENCE_MAX_GAP_MS = 10_000;
