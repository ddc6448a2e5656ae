import { describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/digest.js';
import type { TaskStatus } from '../../src/core/task.js';
import { initialEffects, next } from '../../src/executor/machine.js';
import { isLocalState, LOCAL_STATES, type LocalState, type WireStatus } from '../../src/executor/operation.js';
import { TRANSITIONS } from '../../src/executor/transitions.js';
import {
  cancellingRecord,
  effectsOf,
  ev,
  fetchingRecord,
  fresh,
  RESULT,
  run,
  step,
  T0,
  workingRecord,
} from './fixtures.js';

describe('happy path', () => {
  it('submits, polls, observes completion, fetches, verifies and accepts once', () => {
    const start = fresh();
    expect(initialEffects(start)).toEqual([{ type: 'send_submit', submissionKey: 'key-1' }]);
    const { record, steps } = run(start, [ev.sent, ev.acked, ev.wake, (r) => ev.status(r, 'working'), ev.wake]);
    expect(record.state).toBe('WORKING');
    expect(effectsOf(steps[2]!.effects, 'poll_status')).toEqual([{ type: 'poll_status', taskId: 'task-1', seq: 1 }]);
    const done = run(record, [(r) => ev.status(r, 'completed'), ev.wake, ev.result]);
    expect(done.record.state).toBe('ACCEPTED');
    expect(done.record.history.map((h) => h.to)).toEqual([
      'WORKING',
      'TERMINAL_OBSERVED',
      'FETCHING_RESULT',
      'ACCEPTED',
    ]);
    const accepts = effectsOf(done.effects, 'accept_terminal');
    expect(accepts).toHaveLength(1);
    expect(accepts[0]!.acceptance).toEqual({
      operationId: 'op-1',
      callNodeId: 'node-1',
      requestDigest: start.requestDigest,
      taskId: 'task-1',
      toolVersion: 'v7',
      executionEpoch: 0,
      cancelGeneration: 0,
      status: 'completed',
      resultDigest: digestOf(RESULT),
      payload: RESULT,
    });
  });
});

describe('C2: completed/failed advance only through a fetched, verified result', () => {
  it('C2: a completed status alone never accepts; it moves to TERMINAL_OBSERVED and asks for a fetch', () => {
    const r = run(workingRecord(), [ev.wake, (x) => ev.status(x, 'completed')]);
    expect(r.record.state).toBe('TERMINAL_OBSERVED');
    expect(effectsOf(r.effects, 'accept_terminal')).toEqual([]);
    const fetch = run(r.record, [ev.wake]);
    expect(fetch.record.state).toBe('FETCHING_RESULT');
    expect(effectsOf(fetch.effects, 'fetch_result')).toEqual([{ type: 'fetch_result', taskId: 'task-1' }]);
  });

  it.each([
    ['truncated', { truncated: true }],
    ['malformed', { malformed: true }],
    ['digest mismatch', { digest: digestOf({ other: 1 }) }],
    ['missing payload', { payload: undefined }],
  ])('C2: a %s result is fetched again, never accepted', (_name, patch) => {
    const f = fetchingRecord();
    const result = step(f, (r) => ev.result(r, 'completed', patch));
    expect(result.outcome).toBe('applied');
    expect(result.record.state).toBe('FETCHING_RESULT');
    expect(effectsOf(result.effects, 'accept_terminal')).toEqual([]);
    expect(effectsOf(result.effects, 'schedule_wake')).toHaveLength(1);
    const again = step(result.record, ev.wake);
    expect(effectsOf(again.effects, 'fetch_result')).toHaveLength(1);
  });

  it('C2: after maxFetchAttempts unverifiable results the operation goes to UNKNOWN, not ACCEPTED', () => {
    let r = fetchingRecord();
    for (let i = 0; i < r.policy.maxFetchAttempts; i++) {
      r = step(r, (x) => ev.result(x, 'completed', { truncated: true })).record;
      if (r.state !== 'FETCHING_RESULT') break;
      r = step(r, ev.wake).record;
    }
    expect(r.state).toBe('UNKNOWN');
    expect(r.evidence.at(-1)?.kind).toBe('result_unverifiable');
  });

  it('C2: a result whose status contradicts the observed status is not accepted', () => {
    const result = step(fetchingRecord('completed'), (r) => ev.result(r, 'failed'));
    expect(result.record.state).toBe('UNKNOWN');
    expect(effectsOf(result.effects, 'accept_terminal')).toEqual([]);
  });

  it('C2: a result arriving before the fetch was issued (TERMINAL_OBSERVED) is ignored', () => {
    const observed = run(workingRecord(), [ev.wake, (x) => ev.status(x, 'completed')]).record;
    const result = step(observed, ev.result);
    expect(result).toMatchObject({ outcome: 'ignored', reason: 'late_answer' });
    expect(result.record).toBe(observed);
  });

  it('C2: failed is accepted with the fetched error as payload', () => {
    const error = { code: -32603, message: 'boom' };
    const result = step(fetchingRecord('failed'), (r) =>
      ev.result(r, 'failed', { payload: error, digest: digestOf(error) }),
    );
    expect(result.record.state).toBe('ACCEPTED');
    expect(effectsOf(result.effects, 'accept_terminal')[0]!.acceptance).toMatchObject({
      status: 'failed',
      payload: error,
    });
  });
});

describe('C3: a won cancel is never overtaken by a late completion', () => {
  const won = () => run(cancellingRecord(), [(r) => ev.cancelAcked(r, 'cancelled')]);

  it('C3: a cancelled answer accepts CANCELLED_ACCEPTED with a cancelled receipt, no success payload', () => {
    const { record, effects } = won();
    expect(record.state).toBe('CANCELLED_ACCEPTED');
    expect(effectsOf(effects, 'accept_terminal')[0]!.acceptance).toMatchObject({
      status: 'cancelled',
      payload: null,
      resultDigest: null,
      cancelGeneration: 1,
    });
  });

  it.each([
    ['status_observed', (r: Parameters<typeof ev.status>[0]) => ev.status(r, 'completed')],
    ['result_fetched', (r: Parameters<typeof ev.result>[0]) => ev.result(r)],
    [
      'notification',
      (r: Parameters<typeof ev.result>[0]) => ({
        type: 'notification' as const,
        epoch: r.executionEpoch,
        status: 'completed' as const,
      }),
    ],
  ])('C3: a late completion by %s moves to EFFECT_RECONCILIATION_REQUIRED, never ACCEPTED', (_name, late) => {
    const result = step(won().record, late);
    expect(result.record.state).toBe('EFFECT_RECONCILIATION_REQUIRED');
    expect(effectsOf(result.effects, 'accept_terminal')).toEqual([]);
    expect(effectsOf(result.effects, 'record_late_effect')).toHaveLength(1);
    const after = step(result.record, (r) => ev.result(r));
    expect(after.outcome).toBe('ignored');
  });

  it('C3: a completion that beat the cancel is accepted as completed, never rewritten to cancelled', () => {
    const r = run(cancellingRecord(), [(x) => ev.cancelAcked(x, 'completed'), ev.wake, ev.result]);
    expect(r.record.state).toBe('ACCEPTED');
    expect(effectsOf(r.effects, 'accept_terminal')[0]!.acceptance.status).toBe('completed');
  });

  it('C3: a -32602 "already terminal" rejection reads the status instead of assuming cancelled', () => {
    const c = cancellingRecord();
    const rejected = step(c, { type: 'cancel_rejected_terminal', epoch: 0, generation: 1 });
    expect(rejected.record.state).toBe('CANCEL_REQUESTED');
    expect(effectsOf(rejected.effects, 'accept_terminal')).toEqual([]);
    const polled = run(rejected.record, [ev.wake, (x) => ev.status(x, 'failed')]);
    expect(polled.record.state).toBe('TERMINAL_OBSERVED');
    expect(polled.record.lastServerStatus).toBe('failed');
  });

  it('C3: an empty cancel ack (2026 extension) keeps polling until the status proves cancelled', () => {
    const acked = step(cancellingRecord(), (r) => ev.cancelAcked(r));
    expect(acked.record.state).toBe('CANCEL_REQUESTED');
    const done = run(acked.record, [ev.wake, (x) => ev.status(x, 'cancelled')]);
    expect(effectsOf(done.steps[0]!.effects, 'poll_status')).toHaveLength(1);
    expect(done.record.state).toBe('CANCELLED_ACCEPTED');
  });

  it('C3: a cancelled status seen without our cancel is fetched and accepted as ACCEPTED(cancelled)', () => {
    const r = run(workingRecord(), [ev.wake, (x) => ev.status(x, 'cancelled'), ev.wake]);
    expect(r.record.state).toBe('FETCHING_RESULT');
    const done = step(r.record, (x) => ev.result(x, 'cancelled', { payload: null, digest: digestOf(null) }));
    expect(done.record.state).toBe('ACCEPTED');
  });
});

describe('C5: a doubtful submission is resolved by its key, never by a new one', () => {
  it('C5: a lost submission looks the same key up and never resubmits', () => {
    const r = run(fresh(), [ev.sent, ev.lost]);
    expect(r.record.state).toBe('SUBMISSION_UNKNOWN');
    expect(effectsOf(r.effects, 'lookup_key')).toEqual([{ type: 'lookup_key', submissionKey: 'key-1' }]);
    expect(effectsOf(r.effects, 'send_submit')).toEqual([]);
    const retried = run(r.record, [{ type: 'request_failed', epoch: 0, request: 'lookup', code: 'timeout' }, ev.wake]);
    expect(effectsOf(retried.effects, 'lookup_key')).toEqual([{ type: 'lookup_key', submissionKey: 'key-1' }]);
    expect(effectsOf(retried.effects, 'send_submit')).toEqual([]);
  });

  it('C5: key lookup found -> WORKING with the found task', () => {
    const r = run(fresh(), [
      ev.sent,
      ev.lost,
      { type: 'key_lookup_found', epoch: 0, taskId: 't-9', status: 'working' },
    ]);
    expect(r.record).toMatchObject({ state: 'WORKING', taskId: 't-9', submissionKey: 'key-1' });
  });

  it('C5: a late ack of the original submission also settles the doubt', () => {
    const r = run(fresh(), [ev.sent, ev.lost, ev.acked]);
    expect(r.record).toMatchObject({ state: 'WORKING', taskId: 'task-1' });
  });

  it('C5: only a never-created proof allows a resubmission, and only with a new key', () => {
    const safe = run(fresh(), [ev.sent, ev.lost, { type: 'key_lookup_never_created', epoch: 0 }]);
    expect(safe.record.state).toBe('NOT_FOUND_SAFE');
    expect(effectsOf(safe.effects, 'offer_resubmit')).toHaveLength(1);
    expect(step(safe.record, { type: 'resubmit', epoch: 0, submissionKey: 'key-1' })).toMatchObject({
      outcome: 'rejected',
      reason: 'key_reused',
    });
    const again = step(safe.record, { type: 'resubmit', epoch: 0, submissionKey: 'key-2' });
    expect(again.record).toMatchObject({ state: 'SUBMITTING', submissionKey: 'key-2', priorSubmissionKeys: ['key-1'] });
    expect(effectsOf(again.effects, 'send_submit')).toEqual([{ type: 'send_submit', submissionKey: 'key-2' }]);
    expect(step(workingRecord(), { type: 'resubmit', epoch: 0, submissionKey: 'key-3' }).outcome).toBe('rejected');
  });

  it('C5: a server that cannot look keys up leaves the operation UNKNOWN (C4: queryable by key)', () => {
    const r = run(fresh(), [ev.sent, ev.lost, { type: 'key_lookup_unsupported', epoch: 0 }]);
    expect(r.record.state).toBe('UNKNOWN');
    expect(effectsOf(r.effects, 'record_unknown')).toHaveLength(1);
    expect(effectsOf(r.effects, 'send_submit')).toEqual([]);
  });

  it('C5: a restart after the submission was sent looks the key up instead of sending again', () => {
    const sentOnly = run(fresh(), [ev.sent]).record;
    const resumed = step(sentOnly, { type: 'resumed', epoch: 0 });
    expect(resumed.record.state).toBe('SUBMISSION_UNKNOWN');
    expect(effectsOf(resumed.effects, 'send_submit')).toEqual([]);
    const notSent = step(fresh(), { type: 'resumed', epoch: 0 });
    expect(effectsOf(notSent.effects, 'send_submit')).toEqual([{ type: 'send_submit', submissionKey: 'key-1' }]);
  });

  it('C5: a definitive rejection of the submission is NEVER_CREATED', () => {
    const r = step(run(fresh(), [ev.sent]).record, {
      type: 'submit_rejected',
      epoch: 0,
      code: 'invalid_argument',
      message: 'x',
    });
    expect(r.record.state).toBe('NEVER_CREATED');
  });
});

describe('C8: cancel is a compare-and-set request recorded before it is sent', () => {
  it('C8: bumps the generation, enters CANCEL_REQUESTED and sends that generation in the same step', () => {
    const w = workingRecord();
    const now = w.updatedAt + 10;
    const result = step(w, (r) => ev.cancel(r, 0), now, 0);
    expect(result.record).toMatchObject({ state: 'CANCEL_REQUESTED', cancelGeneration: 1, cancelSentAt: now });
    expect(result.effects).toContainEqual({ type: 'send_cancel', taskId: 'task-1', generation: 1 });
    // The status read that confirms it is one poll interval away (1 s here), not behind the ack.
    expect(result.record.wakeAt).toBe(now + 1_000);
  });

  it('C8: a stale expectedGeneration is rejected and changes nothing', () => {
    const c = cancellingRecord();
    const stale = step(c, (r) => ev.cancel(r, 0));
    expect(stale).toMatchObject({ outcome: 'rejected', reason: 'stale_generation' });
    expect(stale.record).toBe(c);
    expect(step(c, (r) => ev.cancel(r, 5))).toMatchObject({ outcome: 'rejected', reason: 'future_generation' });
    expect(step(c, (r) => ev.cancel(r, 1)).record.cancelGeneration).toBe(2);
  });

  it('C8: a lost cancel ack resends the same generation', () => {
    const r = run(cancellingRecord(), [
      { type: 'request_failed', epoch: 0, request: 'cancel', code: 'network' },
      ev.wake,
    ]);
    expect(effectsOf(r.effects, 'send_cancel')).toEqual([{ type: 'send_cancel', taskId: 'task-1', generation: 1 }]);
  });

  it('C8: cancel is refused before a task id exists and after a terminal status was seen', () => {
    expect(step(fresh(), (r) => ev.cancel(r))).toMatchObject({ outcome: 'rejected', reason: 'no_task_id' });
    expect(step(fetchingRecord(), (r) => ev.cancel(r))).toMatchObject({
      outcome: 'rejected',
      reason: 'already_terminal',
    });
  });
});

describe('C9: a local timeout or disconnect stops local waiting only', () => {
  it('C9: budget_exhausted emits stop_waiting, never send_cancel, and keeps the state', () => {
    const w = workingRecord();
    const result = step(w, { type: 'budget_exhausted', epoch: 0, reason: 'local_timeout' });
    expect(result.record.state).toBe('WORKING');
    expect(result.effects).toEqual([{ type: 'stop_waiting', reason: 'local_timeout' }]);
    expect(step(result.record, ev.wake).outcome).toBe('ignored');
    expect(step(result.record, { type: 'budget_exhausted', epoch: 0, reason: 'disconnect' }).outcome).toBe('ignored');
  });

  it('C9: reaching the wait budget deadline stops waiting instead of polling', () => {
    const w = workingRecord({ budgetMs: 5_000 });
    expect(w.wakeAt).toBeLessThan(T0 + 5_000);
    const late = step(w, ev.wake, T0 + 5_000);
    expect(late.effects).toEqual([{ type: 'stop_waiting', reason: 'budget' }]);
    expect(late.record.state).toBe('WORKING');
  });

  it('C9: answers still apply after waiting stopped, and resumed re-attaches', () => {
    const stopped = step(workingRecord(), { type: 'budget_exhausted', epoch: 0, reason: 'disconnect' }).record;
    const resumed = step(stopped, { type: 'resumed', epoch: 0 });
    expect(resumed.record.waitingStoppedAt).toBeNull();
    expect(effectsOf(resumed.effects, 'schedule_wake')).toHaveLength(1);
  });
});

describe('C10: input_required pauses polling and goes through the approval gate', () => {
  const requests = { q1: { method: 'elicitation/create', params: { message: 'sure?' } } };
  const asked = () =>
    run(workingRecord(), [ev.wake, (r) => ev.status(r, 'input_required', { inputRequests: requests })]);

  it('C10: opens round 1, asks the gate, and schedules no poll', () => {
    const { record, steps } = asked();
    expect(record.state).toBe('INPUT_REQUIRED');
    const last = steps.at(-1)!.effects;
    expect(effectsOf(last, 'ask_approval')).toEqual([{ type: 'ask_approval', round: 1, requests }]);
    // No poll: the one timer is the wait budget's deadline (C9 still holds while the gate is asked).
    const deadline = record.policy.deadlineAt!;
    expect(effectsOf(last, 'schedule_wake')).toEqual([{ type: 'schedule_wake', atMs: deadline, purpose: 'deadline' }]);
    expect(record.wakeAt).toBe(deadline);
    expect(step(record, { type: 'notification', epoch: 0, status: 'completed' })).toMatchObject({
      outcome: 'ignored',
      reason: 'polling_paused',
    });
  });

  it('C9 + C10: nobody answers the gate: at the deadline local waiting stops, the task is left alone', () => {
    const { record } = asked();
    const stopped = step(record, ev.wake, record.wakeAt!);
    expect(stopped.record.state).toBe('INPUT_REQUIRED');
    expect(stopped.record.waitingStoppedAt).toBe(record.wakeAt);
    expect(stopped.effects.map((e) => e.type)).toEqual(['stop_waiting']);
    expect(stopped.record.wakeAt).toBeNull();
  });

  it('C9 + C10: the deadline timer survives a partial reply, a resend and a restart', () => {
    const two = { q1: { method: 'elicitation/create' }, q2: { method: 'elicitation/create' } };
    const { record } = run(workingRecord(), [ev.wake, (r) => ev.status(r, 'input_required', { inputRequests: two })]);
    const deadline = record.policy.deadlineAt!;
    const answered = run(record, [
      { type: 'input_answered', epoch: 0, round: 1, key: 'q1', reply: 1 },
      { type: 'input_sent', epoch: 0, round: 1, keys: ['q1'] },
    ]).record;
    expect(answered.state).toBe('INPUT_REQUIRED');
    expect(answered.wakeAt).toBe(deadline);
    // A lost reply: the resend timer replaces the deadline, and the deadline comes back after it.
    const replied = step(answered, { type: 'input_answered', epoch: 0, round: 1, key: 'q2', reply: 2 }).record;
    const lost = step(replied, { type: 'request_failed', epoch: 0, request: 'input', code: 'timeout' }).record;
    expect(lost.wakeAt).toBeLessThan(deadline);
    const resent = step(lost, ev.wake, lost.wakeAt!);
    expect(effectsOf(resent.effects, 'send_input')).toHaveLength(1);
    expect(resent.record.wakeAt).toBe(deadline);
    const resumed = step({ ...answered, wakeAt: null }, { type: 'resumed', epoch: 0 });
    expect(resumed.record.wakeAt).toBe(deadline);
  });

  it('C10: the reply is bound to its round; replays and other rounds are ignored', () => {
    const { record } = asked();
    const answer = { type: 'input_answered' as const, epoch: 0, round: 1, key: 'q1', reply: { action: 'accept' } };
    expect(step(record, { ...answer, round: 0 })).toMatchObject({ outcome: 'ignored', reason: 'stale_round' });
    expect(step(record, { ...answer, round: 2 })).toMatchObject({ outcome: 'rejected', reason: 'unknown_round' });
    expect(step(record, { ...answer, key: 'zz' })).toMatchObject({ outcome: 'rejected', reason: 'unknown_input_key' });
    const sent = step(record, answer);
    expect(sent.effects).toEqual([
      { type: 'send_input', taskId: 'task-1', round: 1, responses: { q1: { action: 'accept' } } },
    ]);
    expect(step(sent.record, answer)).toMatchObject({ outcome: 'ignored', reason: 'replayed_input' });
    const resumed = step(sent.record, { type: 'input_sent', epoch: 0, round: 1, keys: ['q1'] });
    expect(resumed.record.state).toBe('WORKING');
    expect(effectsOf(resumed.effects, 'schedule_wake')).toHaveLength(1);
    // The server's next snapshot still lists q1 (eventually consistent): a replay, not a new round.
    const replay = run(resumed.record, [ev.wake, (r) => ev.status(r, 'input_required', { inputRequests: requests })]);
    expect(replay.record.state).toBe('WORKING');
    expect(effectsOf(replay.effects, 'ask_approval')).toEqual([]);
    expect(step(replay.record, answer).outcome).toBe('ignored');
  });

  it('C10: a lost send_input is resent, not re-asked', () => {
    const sent = step(asked().record, { type: 'input_answered', epoch: 0, round: 1, key: 'q1', reply: 1 }).record;
    const r = run(sent, [{ type: 'request_failed', epoch: 0, request: 'input', code: 'timeout' }, ev.wake]);
    expect(effectsOf(r.effects, 'send_input')).toEqual([
      { type: 'send_input', taskId: 'task-1', round: 1, responses: { q1: 1 } },
    ]);
    expect(effectsOf(r.effects, 'poll_status')).toEqual([]);
  });
});

describe('C6: polls follow the server interval plus jitter, back off on 429/503', () => {
  it('C6: next poll is interval + jitter from the injected random value', () => {
    const acked = run(fresh(), [ev.sent]).record;
    const low = step(acked, (r) => ev.acked(r, 'working', { pollIntervalMs: 2_000 }), T0 + 100, 0);
    expect(low.record.wakeAt).toBe(T0 + 100 + 2_000);
    const high = step(acked, (r) => ev.acked(r, 'working', { pollIntervalMs: 2_000 }), T0 + 100, 0.99);
    expect(high.record.wakeAt).toBeGreaterThan(T0 + 2_100);
    expect(high.record.wakeAt).toBeLessThanOrEqual(T0 + 100 + 2_200);
  });

  it('C6: a server interval below the floor is raised to minPollIntervalMs', () => {
    const r = step(run(fresh(), [ev.sent]).record, (x) => ev.acked(x, 'working', { pollIntervalMs: 1 }), T0 + 10, 0);
    expect(r.record.wakeAt).toBe(T0 + 10 + r.record.policy.minPollIntervalMs);
  });

  it('C6: 429 with Retry-After waits at least that long; repeated failures back off exponentially', () => {
    let r = run(workingRecord(), [ev.wake]).record;
    const throttled = step(
      r,
      { type: 'request_failed', epoch: 0, request: 'poll', code: 429, retryAfterMs: 30_000 },
      T0 + 1_000,
      0,
    );
    expect(throttled.record.wakeAt).toBe(T0 + 31_000);
    const gaps: number[] = [];
    let now = T0 + 1_000;
    for (let i = 0; i < 4; i++) {
      const failed = step(r, { type: 'request_failed', epoch: 0, request: 'poll', code: 503 }, now, 0);
      gaps.push((failed.record.wakeAt ?? 0) - now);
      r = step(failed.record, ev.wake, failed.record.wakeAt ?? 0, 0).record;
      now = r.updatedAt;
    }
    expect(gaps).toEqual([500, 1_000, 2_000, 4_000]);
    // Any answer resets the back-off.
    expect(step(r, (x) => ev.status(x, 'working'), now, 0).record.attempts.consecutiveFailures).toBe(0);
  });

  it('C6: a poll never lands past the wait budget; it becomes a deadline wake', () => {
    const w = run(fresh({ budgetMs: 1_500 }), [ev.sent]).record;
    const r = step(w, (x) => ev.acked(x, 'working', { pollIntervalMs: 10_000 }), T0 + 100, 0.5);
    expect(r.record.wakeAt).toBe(T0 + 1_500);
    expect(effectsOf(r.effects, 'schedule_wake')[0]!.purpose).toBe('deadline');
  });

  it('C6: a poll is pulled in to the expiry so a terminal task is read before it is purged', () => {
    const w = run(fresh({ budgetMs: null }), [ev.sent]).record;
    const r = step(w, (x) => ev.acked(x, 'working', { pollIntervalMs: 50_000, expiresAt: T0 + 20_000 }), T0 + 100, 0);
    expect(r.record.wakeAt).toBe(T0 + 20_000);
  });
});

describe('epochs, ordering and duplicates', () => {
  it('events stamped with an older execution epoch are ignored; newer ones rejected', () => {
    const w = step(workingRecord(), { type: 'rollback', newEpoch: 3 }).record;
    expect(w.executionEpoch).toBe(3);
    const stale = step(w, { ...ev.status(w, 'completed'), epoch: 2 } as never);
    expect(stale).toMatchObject({ outcome: 'ignored', reason: 'stale_epoch' });
    expect(stale.record).toBe(w);
    expect(step(w, { type: 'resumed', epoch: 4 })).toMatchObject({ outcome: 'rejected', reason: 'future_epoch' });
    expect(step(w, { type: 'rollback', newEpoch: 3 })).toMatchObject({ outcome: 'ignored', reason: 'stale_epoch' });
  });

  it('rollback adopts the new epoch for in-flight records only and re-issues their pending work', () => {
    const r = step(workingRecord(), { type: 'rollback', newEpoch: 1 });
    expect(effectsOf(r.effects, 'schedule_wake')).toHaveLength(1);
    const accepted = run(fetchingRecord(), [ev.result]).record;
    expect(step(accepted, { type: 'rollback', newEpoch: 1 })).toMatchObject({ outcome: 'ignored', reason: 'settled' });
  });

  it('out-of-order poll answers and callbacks from an older server epoch are ignored', () => {
    // Two polls in flight: one from the timer, one re-issued after a restart.
    let r = run(workingRecord(), [ev.wake, { type: 'resumed', epoch: 0 }, ev.wake]).record;
    expect(r.pollCursor).toEqual({ issued: 2, observed: 0 });
    r = step(r, (x) => ({ ...ev.status(x, 'working', { serverEpoch: 2 }), seq: 2 }) as never).record;
    expect(r.pollCursor).toEqual({ issued: 2, observed: 2 });
    // The answer to poll #1 arrives last: reordered, whatever it says.
    expect(step(r, (x) => ({ ...ev.status(x, 'completed'), seq: 1 }) as never)).toMatchObject({ reason: 'reordered' });
    expect(step(r, (x) => ({ ...ev.status(x, 'completed'), seq: 9 }) as never)).toMatchObject({
      reason: 'unissued_poll',
    });
    const polled = step(r, ev.wake).record;
    expect(step(polled, (x) => ev.status(x, 'completed', { serverEpoch: 1 }))).toMatchObject({
      reason: 'stale_server_epoch',
    });
    expect(step(polled, (x) => ev.status(x, 'completed', { serverEpoch: 2 })).record.state).toBe('TERMINAL_OBSERVED');
  });

  it('a duplicate or superseded timer is ignored', () => {
    const w = workingRecord();
    const fired = step(w, ev.wake);
    expect(step(fired.record, { type: 'wake', epoch: 0, dueAt: w.wakeAt ?? 0 })).toMatchObject({
      reason: 'superseded_wake',
    });
  });
});

describe('404 and expiry', () => {
  it('404 while working -> UNKNOWN with evidence and an automatic key lookup', () => {
    const r = step(workingRecord(), { type: 'not_found', epoch: 0, request: 'poll' });
    expect(r.record.state).toBe('UNKNOWN');
    expect(effectsOf(r.effects, 'record_unknown')).toHaveLength(1);
    expect(effectsOf(r.effects, 'lookup_key')).toEqual([{ type: 'lookup_key', submissionKey: 'key-1' }]);
  });

  it('404 after expiry with a terminal status observed -> EXPIRED_WITH_RECEIPT (kind expired, never a success)', () => {
    const r = step(fetchingRecord(), { type: 'not_found', epoch: 0, afterExpiry: true });
    expect(r.record.state).toBe('EXPIRED_WITH_RECEIPT');
    expect(effectsOf(r.effects, 'accept_terminal')[0]!.acceptance).toMatchObject({
      status: 'expired',
      resultDigest: null,
      payload: { observedStatus: 'completed' },
    });
  });

  it('404 before expiry after a terminal status -> UNKNOWN, not a receipt', () => {
    const r = step(fetchingRecord(), { type: 'not_found', epoch: 0, afterExpiry: false });
    expect(r.record.state).toBe('UNKNOWN');
    expect(effectsOf(r.effects, 'accept_terminal')).toEqual([]);
  });

  it('afterExpiry defaults to the record expiry', () => {
    const f = run(workingRecord(), [
      ev.wake,
      (x) => ev.status(x, 'completed', { expiresAt: T0 + 50_000 }),
      ev.wake,
    ]).record;
    expect(step(f, { type: 'not_found', epoch: 0 }, T0 + 49_000).record.state).toBe('UNKNOWN');
    expect(step(f, { type: 'not_found', epoch: 0 }, T0 + 50_000).record.state).toBe('EXPIRED_WITH_RECEIPT');
  });

  it('C4: UNKNOWN reconciles by key; a pending cancel survives; never-created after an ack stays UNKNOWN', () => {
    const c = step(cancellingRecord(), { type: 'not_found', epoch: 0 }).record;
    const found = step(c, { type: 'key_lookup_found', epoch: 0, taskId: 'task-1', status: 'working' });
    expect(found.record.state).toBe('CANCEL_REQUESTED');
    const unknown = step(workingRecord(), { type: 'not_found', epoch: 0 }).record;
    const denied = step(unknown, { type: 'key_lookup_never_created', epoch: 0 });
    expect(denied.record.state).toBe('UNKNOWN');
    expect(denied.record.evidence.at(-1)?.kind).toBe('never_created_after_ack');
  });
});

describe('invalid events and the type-level guard', () => {
  it('events invalid for the state are rejected with a reason and the record unchanged', () => {
    const w = workingRecord();
    const bad = [
      step(w, { type: 'abandon', epoch: 0, reason: 'x' }),
      step(w, { type: 'input_answered', epoch: 0, round: 3, key: 'k', reply: 1 }),
      step(w, { type: 'bogus', epoch: 0 } as never),
      step(w, null as never),
    ];
    for (const result of bad) {
      expect(result.outcome).toBe('rejected');
      expect(result.record).toBe(w);
      expect(result.effects).toEqual([]);
    }
  });

  it('next() never mutates its input (deep-frozen record)', () => {
    const frozen = deepFreeze(fetchingRecord());
    expect(() => next(frozen, ev.result(frozen), T0 + 99_999, 0.3)).not.toThrow();
  });

  it('local states and wire statuses cannot be mixed', () => {
    // @ts-expect-error a wire status is not a local state
    const wrong: LocalState = 'working';
    // @ts-expect-error a local state is not a wire status
    const alsoWrong: WireStatus = 'WORKING';
    const status: TaskStatus = 'working';
    expect(isLocalState(wrong)).toBe(false);
    expect(isLocalState(alsoWrong)).toBe(true);
    expect(isLocalState(status)).toBe(false);
    expect(LOCAL_STATES.every(isLocalState)).toBe(true);
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...LOCAL_STATES].sort());
  });
});

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
