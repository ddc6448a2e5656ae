/**
 * When to poll or retry next (C6). Pure: `random` is a uniform draw in [0, 1) supplied by the caller.
 */
import type { ToolOperation } from './operation.js';

export interface WakePlan {
  readonly atMs: number;
  readonly purpose: 'poll' | 'retry' | 'deadline';
}

/** The server interval clamped to the policy's floor and ceiling. */
export function effectiveInterval(record: ToolOperation): number {
  const { defaultPollIntervalMs, minPollIntervalMs, maxPollIntervalMs } = record.policy;
  const suggested = record.pollIntervalMs ?? defaultPollIntervalMs;
  return Math.min(maxPollIntervalMs, Math.max(minPollIntervalMs, suggested));
}

/**
 * Next poll: the interval plus up to `jitterRatio` of it, pulled in to the expiry (so a terminal task
 * is read before the server may purge it, but never sooner than the minimum interval), and never
 * past the deadline: a poll that would land after it becomes a `deadline` wake instead.
 */
export function nextPoll(record: ToolOperation, now: number, random: number): WakePlan {
  const interval = effectiveInterval(record);
  let at = now + interval + Math.floor(interval * record.policy.jitterRatio * clampUnit(random));
  if (record.expiresAt !== null && at > record.expiresAt) {
    at = Math.max(record.expiresAt, now + record.policy.minPollIntervalMs);
  }
  return boundByDeadline(record, now, { atMs: at, purpose: 'poll' });
}

/**
 * Retry after `failures` consecutive throttled or lost requests: base * 2^(failures-1) capped, plus
 * jitter, and never before the server's Retry-After.
 */
export function nextRetry(
  record: ToolOperation,
  now: number,
  random: number,
  failures: number,
  retryAfterMs?: number,
): WakePlan {
  const { backoffBaseMs, backoffMaxMs, jitterRatio } = record.policy;
  const exponent = Math.min(Math.max(failures - 1, 0), 30);
  const backoff = Math.min(backoffMaxMs, backoffBaseMs * 2 ** exponent);
  const delay = Math.max(backoff + Math.floor(backoff * jitterRatio * clampUnit(random)), retryAfterMs ?? 0);
  return boundByDeadline(record, now, { atMs: now + delay, purpose: 'retry' });
}

/** An immediate wake (start a fetch, re-read after a hint), still subject to the deadline. */
export function immediate(record: ToolOperation, now: number): WakePlan {
  return boundByDeadline(record, now, { atMs: now, purpose: 'retry' });
}

export function deadlineReached(record: ToolOperation, now: number): boolean {
  return record.policy.deadlineAt !== null && now >= record.policy.deadlineAt;
}

function boundByDeadline(record: ToolOperation, now: number, plan: WakePlan): WakePlan {
  const deadline = record.policy.deadlineAt;
  if (deadline !== null && plan.atMs >= deadline) return { atMs: Math.max(deadline, now), purpose: 'deadline' };
  return plan;
}

function clampUnit(random: number): number {
  if (!Number.isFinite(random) || random < 0) return 0;
  return random >= 1 ? 0.999_999 : random;
}
