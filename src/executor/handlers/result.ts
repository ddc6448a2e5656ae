/**
 * C2: completed/failed advance only through a fetched result whose digest was verified here.
 * Truncated, malformed or mismatching results are fetched again, never accepted; after
 * `maxFetchAttempts` such answers the operation goes to UNKNOWN.
 */
import { digestOf } from '../../core/digest.js';
import type { EventOf } from '../events.js';
import { nextRetry } from '../schedule.js';
import { rejected, type Draft, type StepResult } from '../step.js';
import { acceptanceOf, changed, isCompletion, lateEffect, toUnknown } from './outcomes.js';
import { lateAnswer } from './submission.js';
import { changeOf } from './changed.js';

export function onResultFetched(d: Draft, ev: EventOf<'result_fetched'>): StepResult {
  const r = d.base;
  if (r.state === 'CANCELLED_ACCEPTED' && isCompletion(ev.status)) {
    return lateEffect(d, `result ${ev.status} fetched after the cancel won`, ev.status);
  }
  if (r.state !== 'FETCHING_RESULT') return lateAnswer(d);
  const taskId = r.taskId;
  if (taskId === null) return rejected(r, 'no_task_id');

  if (!isVerified(ev)) {
    // An unverifiable result is still an answer: the lost-request streak ends (a long partition had
    // pushed it to the 60 s cap, and three more faults after it outlived the 180 s liveness bound,
    // seed 1147). Refetches back off on their own count instead.
    d.resetFailures().countAttempt('unverifiedResults');
    const { unverifiedResults } = d.record.attempts;
    d.set({
      lastFailure: {
        request: 'fetch',
        code: 'unverifiable',
        reason: ev.reason ?? 'result truncated, malformed or not matching its digest',
        attempt: unverifiedResults,
        at: d.now,
      },
    });
    if (unverifiedResults >= r.policy.maxFetchAttempts) {
      const last = ev.reason === undefined ? '' : `, the last: ${ev.reason}`;
      return toUnknown(d, 'result_unverifiable', `${unverifiedResults} unverifiable results${last}`, false);
    }
    return d.wake(nextRetry(d.record, d.now, d.random, unverifiedResults)).done();
  }
  // Another status, or another result, than first observed: never accepted (C13).
  const change = changeOf(d, ev.status, ev.digest);
  if (change !== null) return changed(d, change);
  if (ev.status !== r.lastServerStatus) {
    const detail = `status ${String(r.lastServerStatus)} but result ${ev.status}`;
    return toUnknown(d, 'result_status_mismatch', detail, false);
  }
  d.set({ resultDigest: ev.digest }).resetFailures().clearWake().moveTo('ACCEPTED');
  const acceptance = acceptanceOf(d.record, taskId, ev.status, ev.payload, ev.digest);
  return d.emit({ type: 'accept_terminal', acceptance }).done();
}

/** Complete, well-formed, and its digest recomputed from the payload matches. Never throws. */
export function isVerified(ev: EventOf<'result_fetched'>): boolean {
  if (ev.truncated || ev.malformed || ev.payload === undefined) return false;
  try {
    return digestOf(ev.payload) === ev.digest;
  } catch {
    return false;
  }
}
