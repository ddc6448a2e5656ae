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
 * Next poll: the interval plus up to `jitterRatio` of it, pulled in to an expiry still ahead (so a
 * terminal task is read before the server may purge it, but never sooner than the minimum interval),
 * never before the server's Retry-After (`notBefore`), and never past the deadline: a poll that would
 * land after it becomes a `deadline` wake instead. Once the expiry has passed the server's interval
 * applies again: a task still working is never deleted by its TTL (S7), so there is nothing to race.
 */
export function nextPoll(record: ToolOperation, now: number, random: number): WakePlan {
  const interval = effectiveInterval(record);
  let at = now + interval + Math.floor(interval * record.policy.jitterRatio * clampUnit(random));
  if (record.expiresAt !== null && record.expiresAt > now && at > record.expiresAt) {
    at = Math.max(record.expiresAt, now + record.policy.minPollIntervalMs);
  }
  return boundByDeadline(record, now, { atMs: notBefore(record, at), purpose: 'poll' });
}

/**
 * The status read confirming a cancel (issue 11, defect 7): on the executor's own short cadence, not
 * the server's interval (a server may suggest 30 s, and our cancel confirmation p99 target is 5 s).
 * At most `cancelPollIntervalMs` (default 1 s), never under the per-operation floor
 * (`minPollIntervalMs`, the QPS cap per operation), plus jitter, never before a Retry-After (C6),
 * never past the deadline. A cancel is one per operation, so this costs at most ~1 request/s while
 * it lasts; the executor-wide token bucket still caps the total.
 */
export function nextCancelPoll(record: ToolOperation, now: number, random: number): WakePlan {
  const { minPollIntervalMs, jitterRatio } = record.policy;
  const cap = record.policy.cancelPollIntervalMs ?? CANCEL_POLL_MAX_MS;
  const interval = Math.max(minPollIntervalMs, Math.min(effectiveInterval(record), cap));
  const at = now + interval + Math.floor(interval * jitterRatio * clampUnit(random));
  return boundByDeadline(record, now, { atMs: notBefore(record, at), purpose: 'poll' });
}

const CANCEL_POLL_MAX_MS = 1_000;

/**
 * Retry after `failures` consecutive throttled or lost requests: base * 2^(failures-1) capped, plus
 * jitter, and never before the server's Retry-After. When the server names its Retry-After, that
 * (at least the base back-off) is the wait: the server said when it takes requests again, and a
 * back-off grown to its 60 s cap by an earlier outage would otherwise hold a healed operation back
 * for a minute per throttled answer (gate seeds 4489, 6919, 7083 failed liveness that way).
 */
export function nextRetry(
  record: ToolOperation,
  now: number,
  random: number,
  failures: number,
  retryAfterMs?: number,
): WakePlan {
  const exponent = retryAfterMs === undefined ? Math.min(Math.max(failures - 1, 0), 30) : 0;
  return retryPlan(record, now, random, exponent, record.policy.backoffMaxMs, retryAfterMs);
}

/**
 * Resend of a cancel (or the status read confirming it) after a lost or throttled answer: a short,
 * fixed cadence instead of the poll back-off. The back-off grows to `backoffMaxMs` (60 s), which is
 * what pushed cancel confirmation p99 to ~19 s in the gate; a cancel is one request per operation, so
 * capping its retry at 1 s keeps it at 1 request/s (the 250 ms poll floor allows 4/s) while a lost ack (a 2 s
 * transport timeout) costs about 2.5 s, not 2 s + 2^n x 500 ms. Retry-After still wins.
 */
export function nextCancelRetry(
  record: ToolOperation,
  now: number,
  random: number,
  failures: number,
  retryAfterMs?: number,
): WakePlan {
  const exponent = Math.min(Math.max(failures - 1, 0), 1);
  return retryPlan(
    record,
    now,
    random,
    exponent,
    Math.min(record.policy.backoffMaxMs, CANCEL_RETRY_MAX_MS),
    retryAfterMs,
  );
}

/** base * 2^exponent capped at `capMs`, plus jitter; at least the Retry-After, after `notBefore`. */
function retryPlan(
  record: ToolOperation,
  now: number,
  random: number,
  exponent: number,
  capMs: number,
  retryAfterMs: number | undefined,
): WakePlan {
  const { backoffBaseMs, jitterRatio } = record.policy;
  const backoff = Math.min(capMs, backoffBaseMs * 2 ** exponent);
  const delay = Math.max(backoff + Math.floor(backoff * jitterRatio * clampUnit(random)), retryAfterMs ?? 0);
  return boundByDeadline(record, now, { atMs: notBefore(record, now + delay), purpose: 'retry' });
}

const CANCEL_RETRY_MAX_MS = 1_000;

/** An immediate wake (start a fetch, re-read after a hint), still subject to Retry-After and the deadline. */
export function immediate(record: ToolOperation, now: number): WakePlan {
  return boundByDeadline(record, now, { atMs: notBefore(record, now), purpose: 'retry' });
}

/**
 * The per-operation status read cap (C6): `1000 / minPollIntervalMs + 1` reads in any one second,
 * 5 at the 250 ms floor (a steady poll at the floor puts 4 in a second, and the cap leaves one for
 * a read a push brought forward). It binds every status read whatever sent it: a poll, a read a
 * push brought forward, the read after an input reply or a key lookup, the result read (a
 * `tasks/get` on the Tasks extension). Each path keeps its own cadence from its own answer, so
 * together they can crowd a second (gate seeds 28084, 29927, 82675: 6 reads).
 */
export function statusReadCap(policy: Pick<ToolOperation['policy'], 'minPollIntervalMs'>): number {
  return Math.floor(1_000 / Math.max(1, policy.minPollIntervalMs)) + 1;
}

/**
 * When the next status read may leave: `now`, or once the oldest of the last `cap` reads sent
 * (`sentAt`, ascending) is a full second old, so no second ever holds more than `cap`.
 */
export function statusReadOpensAt(sentAt: readonly number[], now: number, cap: number): number {
  if (sentAt.length < cap) return now;
  return Math.max(now, (sentAt[sentAt.length - cap] as number) + STATUS_READ_WINDOW_MS);
}

const STATUS_READ_WINDOW_MS = 1_000;

/** `at`, or the end of the server's Retry-After if that is later (C6). */
export function notBefore(record: ToolOperation, at: number): number {
  const until = record.notBefore ?? null;
  return until !== null && until > at ? until : at;
}

/** True while a Retry-After is running: no request may leave before `record.notBefore` (C6). */
export function throttled(record: ToolOperation, now: number): boolean {
  const until = record.notBefore ?? null;
  return until !== null && until > now;
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
