import { TerminusError } from '../core/errors.js';

/** Milliseconds a caller at its task cap is told to wait: long enough for some of its tasks to end. */
export const LIVE_CAP_RETRY_MS = 10_000;

/**
 * The refusal of a create over `NewTask.maxLive` (T-79), the same from every store: retryable, with
 * `details.reason` `too_many_active_tasks`, the limit and when to try again.
 */
export function tooManyLive(limit: number, live: number): TerminusError {
  return new TerminusError(
    'resource_exhausted',
    `This caller has ${live} unfinished tasks (limit ${limit}, maxLiveTasksPerOwner); wait for some to end or cancel them`,
    { details: { reason: 'too_many_active_tasks', limit, retryAfterMs: LIVE_CAP_RETRY_MS } },
  );
}
