/**
 * The pure machine for issue 11: waiters and their budgets (C11), a synchronous answer to the
 * submission (C12), the cancel confirmation cadence (defect 7) and what the statuses read from the
 * record (defect 6).
 */
import { describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/digest.js';
import { toStatus } from '../../src/executor/interpreter-status.js';
import { effectsOf, ev, fresh, RESULT, run, step, T0, workingRecord } from './fixtures.js';

describe('C11: a budget belongs to a waiter', () => {
  it('a resume after the budget ran out takes the new deadline and polls again (it used to stop at once)', () => {
    const working = workingRecord({ budgetMs: 1_000 });
    const stopped = step(working, ev.wake, working.policy.deadlineAt! + 1).record;
    expect(stopped.waitingStoppedAt).not.toBeNull();
    const now = stopped.updatedAt + 60_000;
    const resumed = step(stopped, { type: 'resumed', epoch: 0, deadlineAt: now + 10_000 }, now);
    expect(resumed.record.policy.deadlineAt).toBe(now + 10_000);
    expect(resumed.record.waitingStoppedAt).toBeNull();
    const wake = step(resumed.record, ev.wake, resumed.record.wakeAt!);
    expect(effectsOf(wake.effects, 'poll_status')).toHaveLength(1);
    expect(effectsOf(wake.effects, 'stop_waiting')).toEqual([]);
  });

  it('a second waiter extends a live wait to the later deadline, never shortens it; null is unbounded', () => {
    const working = workingRecord({ budgetMs: 5_000 });
    const first = working.policy.deadlineAt!;
    const shorter = step(working, { type: 'waiter_joined', epoch: 0, deadlineAt: first - 1_000 });
    expect(shorter.outcome).toBe('ignored');
    const longer = step(working, { type: 'waiter_joined', epoch: 0, deadlineAt: first + 9_000 });
    expect(longer.record.policy.deadlineAt).toBe(first + 9_000);
    const unbounded = step(longer.record, { type: 'waiter_joined', epoch: 0, deadlineAt: null });
    expect(unbounded.record.policy.deadlineAt).toBeNull();
  });

  it('a waiter joining one that gave up takes the operation up again with its own deadline', () => {
    const working = workingRecord({ budgetMs: 1_000 });
    const stopped = step(working, ev.wake, working.policy.deadlineAt! + 1).record;
    const now = stopped.updatedAt + 5_000;
    const joined = step(stopped, { type: 'waiter_joined', epoch: 0, deadlineAt: now + 3_000 }, now);
    expect(joined.record).toMatchObject({ waitingStoppedAt: null, policy: { deadlineAt: now + 3_000 } });
    expect(effectsOf(joined.effects, 'schedule_wake')).toHaveLength(1);
  });
});

describe('C12: a synchronous answer to the submission', () => {
  it('is accepted from SUBMITTING in one step, as an immediate completed acceptance', () => {
    const sent = run(fresh(), [ev.sent]).record;
    const answered = step(sent, {
      type: 'submit_completed',
      epoch: 0,
      payload: RESULT,
      digest: digestOf(RESULT),
      valid: true,
    });
    expect(answered.record.state).toBe('ACCEPTED');
    const [accept] = effectsOf(answered.effects, 'accept_terminal');
    expect(accept!.acceptance).toMatchObject({ status: 'completed', immediate: true, taskId: '', payload: RESULT });
  });

  it('is never accepted with a digest that does not match, nor when validateResult refused it: UNKNOWN', () => {
    const sent = run(fresh(), [ev.sent]).record;
    const forged = step(sent, { type: 'submit_completed', epoch: 0, payload: RESULT, digest: 'x', valid: true });
    expect(forged.record.state).toBe('UNKNOWN');
    const refused = step(sent, {
      type: 'submit_completed',
      epoch: 0,
      payload: RESULT,
      digest: digestOf(RESULT),
      valid: false,
    });
    expect(refused.record.state).toBe('UNKNOWN');
    expect(effectsOf(refused.effects, 'accept_terminal')).toEqual([]);
    // The key lookup saying "never created" cannot make a call that ran NEVER_CREATED.
    const looked = step(refused.record, { type: 'key_lookup_never_created', epoch: 0 });
    expect(looked.record.state).toBe('UNKNOWN');
  });
});

describe('defect 7: the cancel cadence is the executor’s', () => {
  it('after an empty ack the next read is within 1.1 s even with a 30 s server interval', () => {
    const working = { ...workingRecord(), pollIntervalMs: 30_000 };
    const cancelled = step(working, (r) => ({
      type: 'cancel_requested',
      epoch: 0,
      expectedGeneration: r.cancelGeneration,
    }));
    expect(cancelled.record.wakeAt! - cancelled.record.updatedAt).toBeLessThanOrEqual(1_100);
    const acked = step(cancelled.record, { type: 'cancel_acked', epoch: 0, generation: 1 });
    expect(acked.record.wakeAt! - acked.record.updatedAt).toBeLessThanOrEqual(1_100);
    expect(toStatus(acked.record, acked.record.updatedAt, false).cancel).toBe('delivered');
  });
});

describe('defect 6: activity read from the record', () => {
  it('a lost poll is `unreachable` with the retry time and attempt; an answer makes it `polling` again', () => {
    const working = run(workingRecord(), [ev.wake]).record;
    const failed = step(working, {
      type: 'request_failed',
      epoch: 0,
      request: 'poll',
      code: 'network',
      reason: 'ECONNREFUSED',
    });
    expect(toStatus(failed.record, T0, false).activity).toEqual({
      kind: 'unreachable',
      retryAt: failed.record.wakeAt,
      attempt: 1,
      reason: 'ECONNREFUSED',
    });
    const retried = step(failed.record, ev.wake, failed.record.wakeAt!);
    const answered = step(retried.record, (r) => ev.status(r, 'working'));
    expect(toStatus(answered.record, T0, false).activity).toEqual({ kind: 'polling' });
  });
});
