/**
 * The pure machine for issue 11: waiters and their budgets (C11), a synchronous answer to the
 * submission (C12), the cancel confirmation cadence (defect 7) and what the statuses read from the
 * record (defect 6).
 */
import { describe, expect, it } from 'vitest';
import { MAX_PRE_TASK_ROUNDS } from '../../src/executor/handlers/submission.js';
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

  it('a waiter joining while an input reply awaits its resend at the old deadline still resends it', () => {
    // Gate seeds 117965, 218875, 252975: the reply was lost to a server crash and its resend, planned
    // past the deadline, was cut short to it; the later waiter disarmed that wake as the bare
    // deadline, and nothing ever resent the reply (the task waited on it for good).
    const requests = { q1: { method: 'elicitation/create' } };
    const working = workingRecord({ budgetMs: 5_000 });
    const deadline = working.policy.deadlineAt!;
    const asked = run(working, [
      ev.wake,
      (r) => ev.status(r, 'input_required', { inputRequests: requests }),
      { type: 'input_answered', epoch: 0, round: 1, key: 'q1', reply: { ok: true } },
    ]).record;
    const lost = { type: 'request_failed', epoch: 0, request: 'input', code: 'network' } as const;
    const failed = step(asked, lost, deadline - 100).record;
    expect(failed.wakeAt).toBe(deadline);
    const now = deadline - 50;
    const joined = step(failed, { type: 'waiter_joined', epoch: 0, deadlineAt: null }, now);
    expect(joined.record.policy.deadlineAt).toBeNull();
    const [resend] = effectsOf(joined.effects, 'schedule_wake');
    expect(resend).toMatchObject({ purpose: 'retry' });
    expect(resend!.atMs).toBeGreaterThan(now);
    const woke = step(joined.record, ev.wake, resend!.atMs);
    expect(effectsOf(woke.effects, 'send_input')).toEqual([
      { type: 'send_input', taskId: 'task-1', round: 1, responses: { q1: { ok: true } } },
    ]);
  });
});

describe('C12: a synchronous answer to the submission', () => {
  it('is accepted from SUBMITTING in one step, as an immediate completed acceptance', () => {
    const sent = run(fresh(), [ev.sent]).record;
    const answered = step(sent, ev.answered(sent));
    expect(answered.record.state).toBe('ACCEPTED');
    const [accept] = effectsOf(answered.effects, 'accept_terminal');
    expect(accept!.acceptance).toMatchObject({ status: 'completed', immediate: true, taskId: '', payload: RESULT });
  });

  it('is never accepted with a digest that does not match, nor when validateResult refused it: UNKNOWN', () => {
    const sent = run(fresh(), [ev.sent]).record;
    const forged = step(sent, ev.answered(sent, { digest: 'x' }));
    expect(forged.record.state).toBe('UNKNOWN');
    const refused = step(sent, ev.answered(sent, { valid: false }));
    expect(refused.record.state).toBe('UNKNOWN');
    expect(effectsOf(refused.effects, 'accept_terminal')).toEqual([]);
    // The key lookup saying "never created" cannot make a call that ran NEVER_CREATED.
    const looked = step(refused.record, { type: 'key_lookup_never_created', epoch: 0 });
    expect(looked.record.state).toBe('UNKNOWN');
  });

  it('a waiter joining while the plain call is on the wire in this process keeps waiting for its answer', () => {
    // Gate seeds 27292, 46091, 70307, 71522: the first waiter's budget ran out while the plain call
    // ran; the canceller's attach took the operation up as after a restart (UNKNOWN plain_call_lost)
    // and the synchronous answer that arrived 12-24 ms later was dropped as a late answer.
    const sent = run(fresh(), [ev.sent, { type: 'submit_unkeyed', epoch: 0 }]).record;
    const stopped = step(sent, { type: 'budget_exhausted', epoch: 0, reason: 'budget' }).record;
    expect(stopped).toMatchObject({ state: 'SUBMITTING' });
    expect(stopped.waitingStoppedAt).not.toBeNull();
    const now = stopped.updatedAt + 400;
    const joined = step(stopped, { type: 'waiter_joined', epoch: 0, deadlineAt: null }, now);
    expect(joined.record).toMatchObject({ state: 'SUBMITTING', waitingStoppedAt: null, policy: { deadlineAt: null } });
    expect(effectsOf(joined.effects, 'send_submit')).toEqual([]);
    expect(effectsOf(joined.effects, 'lookup_key')).toEqual([]);
    const answered = step(joined.record, ev.answered(joined.record));
    expect(answered.record.state).toBe('ACCEPTED');
    expect(effectsOf(answered.effects, 'accept_terminal')).toHaveLength(1);
  });

  it('a keyed submission still on the wire in this process is not looked up when a waiter joins', () => {
    const sent = run(fresh(), [ev.sent]).record;
    const stopped = step(sent, { type: 'budget_exhausted', epoch: 0, reason: 'budget' }).record;
    const now = stopped.updatedAt + 400;
    const joined = step(stopped, { type: 'waiter_joined', epoch: 0, deadlineAt: now + 5_000 }, now);
    expect(joined.record).toMatchObject({ state: 'SUBMITTING', waitingStoppedAt: null });
    expect(effectsOf(joined.effects, 'lookup_key')).toEqual([]);
    expect(joined.record.wakeAt).toBe(now + 5_000);
    // After a restart (`resumed`) the request is gone with the process: the key is looked up (C5).
    const restarted = step(stopped, { type: 'resumed', epoch: 0, deadlineAt: now + 5_000 }, now);
    expect(restarted.record.state).toBe('SUBMISSION_UNKNOWN');
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

describe('MRTR: input asked for before the task exists', () => {
  it('is an input round in SUBMITTING; the last reply retries the call with the answers under the same key', () => {
    const sent = run(fresh(), [ev.sent]).record;
    const asked = step(sent, {
      type: 'submit_input_required',
      epoch: 0,
      requests: { a: { method: 'elicitation/create' }, b: { method: 'elicitation/create' } },
      requestState: 'opaque',
    });
    expect(asked.record.state).toBe('SUBMITTING');
    const [ask] = effectsOf(asked.effects, 'ask_approval');
    expect(ask).toMatchObject({ round: 1, requests: { a: {}, b: {} } });
    const first = step(asked.record, { type: 'input_answered', epoch: 0, round: 1, key: 'a', reply: 'A' });
    expect(effectsOf(first.effects, 'send_submit')).toEqual([]);
    expect(step(first.record, { type: 'input_answered', epoch: 0, round: 1, key: 'a', reply: 'A2' }).outcome).toBe(
      'ignored',
    );
    expect(step(first.record, { type: 'input_answered', epoch: 0, round: 0, key: 'b', reply: 'B' }).outcome).toBe(
      'ignored',
    );
    const last = step(first.record, { type: 'input_answered', epoch: 0, round: 1, key: 'b', reply: 'B' });
    expect(effectsOf(last.effects, 'send_submit')).toEqual([
      {
        type: 'send_submit',
        submissionKey: sent.submissionKey,
        inputResponses: { a: 'A', b: 'B' },
        requestState: 'opaque',
      },
    ]);
    expect(last.record.preTaskInput).toBeNull();
    // The retried call's answer is the usual one: a task.
    const again = run(last.record, [ev.sent, ev.acked]).record;
    expect(again.state).toBe('WORKING');
  });

  it('a server asking new questions without end is answered MAX_PRE_TASK_ROUNDS times, then the call ends', () => {
    let record = run(fresh(), [ev.sent]).record;
    for (let round = 1; round <= MAX_PRE_TASK_ROUNDS; round++) {
      const request = { method: 'elicitation/create', params: { message: `question ${round}` } };
      const asked = step(record, { type: 'submit_input_required', epoch: 0, requests: { q: request } });
      expect(asked.record.state).toBe('SUBMITTING');
      const answered = step(asked.record, { type: 'input_answered', epoch: 0, round, key: 'q', reply: 'yes' });
      expect(effectsOf(answered.effects, 'send_submit')).toHaveLength(1);
      record = run(answered.record, [ev.sent]).record;
    }
    const endless = step(record, { type: 'submit_input_required', epoch: 0, requests: { q: { method: 'x' } } });
    expect(endless.record.state).toBe('NEVER_CREATED');
    expect(effectsOf(endless.effects, 'ask_approval')).toEqual([]);
    expect(endless.record.evidence.at(-1)).toMatchObject({ kind: 'input_asked_again' });
  });

  it('a question declined and asked again with other words is asked; unchanged, it ends the call', () => {
    const sent = run(fresh(), [ev.sent]).record;
    const question = { method: 'elicitation/create', params: { message: 'Name?' } };
    const asked = step(sent, { type: 'submit_input_required', epoch: 0, requests: { name: question } });
    const declined = step(asked.record, {
      type: 'input_answered',
      epoch: 0,
      round: 1,
      key: 'name',
      reply: { action: 'decline' },
    });
    expect(declined.record.preTaskRefused).toHaveLength(1);
    const retried = run(declined.record, [ev.sent]).record;
    const reworded = { method: 'elicitation/create', params: { message: 'Your name, please?' } };
    const other = step(retried, { type: 'submit_input_required', epoch: 0, requests: { name: reworded } });
    expect(other.record.state).toBe('SUBMITTING');
    expect(effectsOf(other.effects, 'ask_approval')).toHaveLength(1);
    const same = step(retried, { type: 'submit_input_required', epoch: 0, requests: { name: question } });
    expect(same.record.state).toBe('NEVER_CREATED');
    expect(same.record.evidence.at(-1)?.detail).toContain(
      'asked "name" ("Name?") again after the caller declined or cancelled it',
    );
  });
});
