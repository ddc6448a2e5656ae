/**
 * Regression tests for gate findings on `next()`: Retry-After honoured on every path (C6), the
 * cancel resend cadence (cancel confirmation p99 < 5 s) and polling after the expiry (S7).
 */
import { describe, expect, it } from 'vitest';
import type { OperationEvent } from '../../src/executor/events.js';
import type { ToolOperation } from '../../src/executor/operation.js';
import { cancellingRecord, effectsOf, ev, fetchingRecord, fresh, run, step, T0, workingRecord } from './fixtures.js';

const RETRY_AFTER = 30_000;

function throttledPoll(retryAfterMs = RETRY_AFTER): OperationEvent {
  return { type: 'request_failed', epoch: 0, request: 'poll', code: 429, retryAfterMs };
}

/** WORKING, a status read answered 429 with a Retry-After at `at`: returns the record and its end. */
function throttledWorking(at = T0 + 1_000): { record: ToolOperation; until: number } {
  const polling = run(workingRecord(), [ev.wake]).record;
  const throttled = step(polling, throttledPoll(), at, 0);
  expect(throttled.outcome).toBe('applied');
  return { record: throttled.record, until: at + RETRY_AFTER };
}

/** Every request-sending effect of a step. */
function requests(effects: readonly { type: string }[]): string[] {
  const kinds = ['poll_status', 'fetch_result', 'send_cancel', 'send_input', 'lookup_key', 'send_submit'];
  return effects.map((e) => e.type).filter((t) => kinds.includes(t));
}

describe('C6: a Retry-After is kept on the record and honoured by every path', () => {
  it('C6: a throttled answer records notBefore = now + Retry-After', () => {
    const { record, until } = throttledWorking();
    expect(record.notBefore).toBe(until);
    expect(record.wakeAt).toBeGreaterThanOrEqual(until);
  });

  it('C6: a cancel requested inside a Retry-After goes out once; its resend waits for the end', () => {
    const { record, until } = throttledWorking();
    const cancel = step(record, ev.cancel, T0 + 2_000);
    expect(cancel.record.state).toBe('CANCEL_REQUESTED');
    expect(requests(cancel.effects)).toEqual(['send_cancel']);
    const lost = step(
      cancel.record,
      { type: 'request_failed', epoch: 0, request: 'cancel', code: 'timeout' },
      T0 + 4_000,
    );
    expect(lost.record.wakeAt).toBeGreaterThanOrEqual(until);
  });

  it('C6: a cancel acknowledged inside a Retry-After polls no earlier than its end', () => {
    // The seed-19 path: 429 with Retry-After, the caller cancels, the ack comes back quickly.
    const polling = run(workingRecord(), [ev.wake]).record;
    const cancelling = step(polling, ev.cancel, T0 + 900).record;
    const throttled = step(cancelling, throttledPoll(), T0 + 1_000, 0).record;
    const acked = step(throttled, ev.cancelAcked, T0 + 1_100, 0);
    expect(acked.outcome).toBe('applied');
    expect(acked.record.wakeAt).toBeGreaterThanOrEqual(T0 + 1_000 + RETRY_AFTER);
  });

  it('C6: an input reply acknowledged inside a Retry-After resumes polling no earlier than its end', () => {
    const asks = { q1: { method: 'elicitation/create' } };
    const polling = run(workingRecord(), [ev.wake]).record;
    const asked = step(polling, (r) => ev.status(r, 'input_required', { inputRequests: asks }), T0 + 900).record;
    // The 429 of a status read sent before the round opened arrives late: still kept.
    const late = step(asked, throttledPoll(), T0 + 1_000, 0);
    expect(late.outcome).toBe('applied');
    expect(late.record.notBefore).toBe(T0 + 1_000 + RETRY_AFTER);
    const answered = step(late.record, { type: 'input_answered', epoch: 0, round: 1, key: 'q1', reply: 1 }, T0 + 1_100);
    // The reply itself goes out once; its acknowledgement resumes polling only after the Retry-After.
    expect(requests(answered.effects)).toEqual(['send_input']);
    const acked = step(answered.record, { type: 'input_sent', epoch: 0, round: 1, keys: ['q1'] }, T0 + 1_200, 0);
    expect(acked.record.state).toBe('WORKING');
    expect(acked.record.wakeAt).toBeGreaterThanOrEqual(T0 + 1_000 + RETRY_AFTER);
    // A lost reply is resent only after the Retry-After, and so is it after a crash.
    const lost = step(
      answered.record,
      { type: 'request_failed', epoch: 0, request: 'input', code: 'timeout' },
      T0 + 1_300,
    );
    expect(lost.record.wakeAt).toBeGreaterThanOrEqual(T0 + 1_000 + RETRY_AFTER);
    const resumed = step({ ...answered.record, wakeAt: null }, { type: 'resumed', epoch: 0 }, T0 + 1_300);
    expect(requests(resumed.effects)).toEqual([]);
    expect(resumed.record.wakeAt).toBeGreaterThanOrEqual(T0 + 1_000 + RETRY_AFTER);
    expect(effectsOf(step(resumed.record, ev.wake, resumed.record.wakeAt!).effects, 'send_input')).toHaveLength(1);
  });

  it('C6: resume() after an executor crash waits for a Retry-After that is still running', () => {
    const { record, until } = throttledWorking();
    // The crash lost the timer; the record (and its notBefore) survived in the ledger.
    const resumed = step({ ...record, wakeAt: null }, { type: 'resumed', epoch: 0 }, T0 + 2_000);
    expect(requests(resumed.effects)).toEqual([]);
    expect(resumed.record.wakeAt).toBeGreaterThanOrEqual(until);
    const cancelling = step(record, ev.cancel, T0 + 1_500).record;
    const resumedCancel = step({ ...cancelling, wakeAt: null }, { type: 'resumed', epoch: 0 }, T0 + 2_000);
    expect(requests(resumedCancel.effects)).toEqual([]);
    expect(resumedCancel.record.wakeAt).toBeGreaterThanOrEqual(until);
  });

  it('C6: a timer armed before the Retry-After arrived is pushed to its end instead of sending', () => {
    const { record, until } = throttledWorking();
    const early = { ...record, wakeAt: T0 + 2_000 };
    const woke = step(early, ev.wake, T0 + 2_000);
    expect(requests(woke.effects)).toEqual([]);
    expect(woke.record.wakeAt).toBe(until);
    expect(effectsOf(step(woke.record, ev.wake, until).effects, 'poll_status')).toHaveLength(1);
  });

  it('C6: a pushed hint never brings a poll inside a Retry-After', () => {
    const { record, until } = throttledWorking();
    const answered = step(record, ev.wake, until).record;
    const working = step({ ...answered, notBefore: until + 5_000 }, (r) => ev.status(r, 'working'), until + 10, 0);
    expect(working.record.wakeAt).toBeGreaterThanOrEqual(until + 5_000);
    const hint = step(working.record, { type: 'notification', epoch: 0, status: 'completed' }, until + 20);
    if (hint.outcome === 'applied') expect(hint.record.wakeAt).toBeGreaterThanOrEqual(until + 5_000);
  });
});

describe('cancel confirmation: a lost cancel ack is retried promptly (DESIGN.md target p99 < 5 s)', () => {
  const lost: OperationEvent = { type: 'request_failed', epoch: 0, request: 'cancel', code: 'timeout' };

  it('C8: the cancel resend never follows the poll back-off: <= 1.1 s whatever the failure count', () => {
    let r = cancellingRecord();
    // Earlier lost polls have already grown the shared failure counter.
    r = { ...r, attempts: { ...r.attempts, consecutiveFailures: 6 } };
    const gaps: number[] = [];
    for (let i = 0; i < 4; i++) {
      const now = r.updatedAt + 2_000;
      const failed = step(r, lost, now, 0.99);
      gaps.push(failed.record.wakeAt! - now);
      r = step(failed.record, ev.wake, failed.record.wakeAt!).record;
    }
    for (const gap of gaps) expect(gap).toBeLessThanOrEqual(1_100);
  });

  it('C8: a cancel resend carries a status read, and a `cancelled` status confirms the cancel', () => {
    const failed = step(cancellingRecord(), lost, T0 + 3_000, 0);
    const resent = step(failed.record, ev.wake, failed.record.wakeAt!);
    expect(effectsOf(resent.effects, 'send_cancel')).toHaveLength(1);
    expect(effectsOf(resent.effects, 'poll_status')).toHaveLength(1);
    const confirmed = step(resent.record, (r) => ev.status(r, 'cancelled'));
    expect(confirmed.record.state).toBe('CANCELLED_ACCEPTED');
    expect(effectsOf(confirmed.effects, 'accept_terminal')[0]!.acceptance.status).toBe('cancelled');
  });

  it('C8: while the cancel is on the wire the status cadence goes on, and `cancelled` confirms without the ack', () => {
    const c = cancellingRecord();
    expect(c.cancelSentAt).not.toBeNull();
    // One poll interval later the ack has not come (lost, or a slow server): read the status.
    const read = step(c, ev.wake, c.wakeAt!);
    expect(requests(read.effects)).toEqual(['poll_status']);
    const working = step(read.record, (r) => ev.status(r, 'working'), c.wakeAt! + 40, 0);
    expect(working.record.wakeAt).toBe(c.wakeAt! + 40 + 1_000);
    const again = step(working.record, ev.wake, working.record.wakeAt!);
    expect(requests(again.effects)).toEqual(['poll_status']);
    const confirmed = step(again.record, (r) => ev.status(r, 'cancelled'));
    expect(confirmed.record.state).toBe('CANCELLED_ACCEPTED');
    // The lost ack's timeout arrives afterwards and changes nothing.
    expect(step(confirmed.record, lost).outcome).not.toBe('applied');
  });

  it('C8: a failed cancel is resent on its own timer; a status read from before leaves that timer alone', () => {
    const c = cancellingRecord();
    const read = step(c, ev.wake, c.wakeAt!).record;
    const failed = step(read, lost, c.updatedAt + 2_000, 0);
    expect(failed.record.cancelSentAt).toBeNull();
    const armed = failed.record.wakeAt!;
    expect(armed).not.toBeNull();
    const working = step(failed.record, (r) => ev.status(r, 'working'), c.updatedAt + 2_010);
    expect(working.record.wakeAt).toBe(armed);
    expect(effectsOf(working.effects, 'schedule_wake')).toEqual([]);
    // A status read failing after the cancel did never pushes the resend back.
    const pollLost = step(
      failed.record,
      { type: 'request_failed', epoch: 0, request: 'poll', code: 'timeout' },
      armed - 50,
      0.99,
    );
    expect(pollLost.record.wakeAt).toBe(armed);
    const resent = step(pollLost.record, ev.wake, armed);
    expect(requests(resent.effects)).toEqual(['send_cancel', 'poll_status']);
    expect(resent.record.cancelSentAt).toBe(armed);
  });

  it('C8 + C4: a cancel found again after a 404 is resent, whatever was on the wire before (gate seed 10044)', () => {
    const c = cancellingRecord();
    const doubt = step(c, { type: 'not_found', epoch: 0 }).record;
    expect(doubt.state).toBe('UNKNOWN');
    const found = step(doubt, { type: 'key_lookup_found', epoch: 0, taskId: 'task-1', status: 'input_required' });
    expect(found.record).toMatchObject({ state: 'CANCEL_REQUESTED', cancelSentAt: null });
    const woke = step(found.record, ev.wake, found.record.wakeAt!);
    expect(effectsOf(woke.effects, 'send_cancel')).toHaveLength(1);
  });

  it('C2: a key lookup that finds the task terminal fetches its result without reading the status again', () => {
    const doubt = step(workingRecord(), { type: 'not_found', epoch: 0 }).record;
    const found = step(doubt, { type: 'key_lookup_found', epoch: 0, taskId: 'task-1', status: 'completed' });
    expect(found.record.state).toBe('TERMINAL_OBSERVED');
    const woke = step(found.record, ev.wake, found.record.wakeAt!);
    expect(requests(woke.effects)).toEqual(['fetch_result']);
  });

  it('C8: after a restart nothing is on the wire: the resumed wake resends the cancel', () => {
    const c = cancellingRecord();
    const resumed = step({ ...c, wakeAt: null }, { type: 'resumed', epoch: 0 }, c.updatedAt + 100);
    expect(resumed.record.cancelSentAt).toBeNull();
    const woke = step(resumed.record, ev.wake, resumed.record.wakeAt!);
    expect(effectsOf(woke.effects, 'send_cancel')).toHaveLength(1);
  });

  it('C8: the first cancel send goes alone (no status read before the server had a chance to act)', () => {
    const c = run(workingRecord(), [ev.cancel]);
    expect(requests(c.effects)).toEqual(['send_cancel']);
  });
});

describe('S7: after the client-side expiry a working task is polled at the server interval', () => {
  it('S7: once the expiry has passed, nextPoll keeps the server interval, not the 250 ms floor', () => {
    const w = run(fresh({ budgetMs: null }), [ev.sent]).record;
    const acked = step(w, (x) => ev.acked(x, 'working', { pollIntervalMs: 5_000, expiresAt: T0 + 2_000 }), T0 + 100, 0);
    // Before the expiry the poll is pulled in to it (a terminal task is read before its purge).
    expect(acked.record.wakeAt).toBe(T0 + 2_000);
    const polled = step(acked.record, ev.wake, T0 + 2_000).record;
    const still = step(polled, (r) => ev.status(r, 'working'), T0 + 2_050, 0);
    expect(still.record.wakeAt).toBe(T0 + 2_050 + 5_000);
  });
});

describe('C9 + C8: a disconnect after a cancel releases the caller, not the cancel', () => {
  const lost: OperationEvent = { type: 'request_failed', epoch: 0, request: 'cancel', code: 'timeout' };
  const detach: OperationEvent = { type: 'budget_exhausted', epoch: 0, reason: 'disconnect' };

  it('C9: the caller stops waiting, but the owed cancel is still resent and confirmed (seeds 31, 46)', () => {
    const detached = step(cancellingRecord(), detach, T0 + 500);
    expect(effectsOf(detached.effects, 'stop_waiting')).toEqual([{ type: 'stop_waiting', reason: 'disconnect' }]);
    expect(detached.record.waitingStoppedAt).toBe(T0 + 500);
    const failed = step(detached.record, lost, T0 + 2_100, 0);
    expect(failed.record.wakeAt).not.toBeNull();
    const resent = step(failed.record, ev.wake, failed.record.wakeAt!);
    expect(effectsOf(resent.effects, 'send_cancel')).toHaveLength(1);
    const confirmed = step(resent.record, (r) => ev.status(r, 'cancelled'));
    expect(confirmed.record.state).toBe('CANCELLED_ACCEPTED');
  });

  it('C9: a disconnect while WORKING still stops every timer (no cancel, no poll)', () => {
    const detached = step(workingRecord(), detach);
    expect(detached.record.wakeAt).toBeNull();
    expect(step(detached.record, (r) => ev.status(r, 'working')).record.wakeAt ?? null).toBeNull();
  });

  it('C9: the wait budget still bounds a detached cancel: past the deadline nothing is driven', () => {
    const c = run(workingRecord({ budgetMs: 5_000 }), [ev.cancel]).record;
    const detached = step(c, detach, T0 + 1_000).record;
    const late = step(detached, lost, T0 + 6_000, 0);
    expect(late.record.wakeAt).toBeNull();
    expect(effectsOf(late.effects, 'schedule_wake')).toEqual([]);
  });
});

describe('liveness: an answer ends the lost-request streak (gate seed 1147)', () => {
  it('C2 + C6: an unverifiable result after a long partition refetches on its own back-off, not the 60 s cap', () => {
    let r = fetchingRecord();
    // A partition: eight fetches lost in a row push the streak to the 60 s cap.
    for (let i = 0; i < 8; i++) {
      const failed = step(
        r,
        { type: 'request_failed', epoch: 0, request: 'fetch', code: 'timeout' },
        r.updatedAt + 2_000,
        0,
      );
      r = step(failed.record, ev.wake, failed.record.wakeAt!).record;
    }
    expect(r.attempts.consecutiveFailures).toBe(8);
    const truncated = step(r, (x) => ev.result(x, 'completed', { truncated: true }), r.updatedAt + 50, 0);
    expect(truncated.record.attempts.consecutiveFailures).toBe(0);
    expect(truncated.record.wakeAt! - (r.updatedAt + 50)).toBeLessThanOrEqual(1_000);
    // Repeated unverifiable results still back off exponentially, on their own count.
    let u = truncated.record;
    const gaps: number[] = [];
    for (let i = 0; i < 3; i++) {
      u = step(u, ev.wake, u.wakeAt!).record;
      const again = step(u, (x) => ev.result(x, 'completed', { truncated: true }), u.updatedAt + 10, 0);
      gaps.push(again.record.wakeAt! - (u.updatedAt + 10));
      u = again.record;
    }
    expect(gaps).toEqual([1_000, 2_000, 4_000]);
  });
});

describe('liveness: a throttled answer after an outage backs off on its own streak (gate seeds 4489, 6961, 7083)', () => {
  /** WORKING after `n` lost status reads in a row: the outage back-off has grown to its cap. */
  function afterOutage(n: number): { record: ToolOperation; at: number } {
    let record = run(workingRecord(), [ev.wake]).record;
    let at = T0 + 1_000;
    for (let i = 0; i < n; i++) {
      const lost = step(record, { type: 'request_failed', epoch: 0, request: 'poll', code: 'timeout' }, at, 0);
      expect(lost.outcome).toBe('applied');
      record = lost.record;
      at = (record.wakeAt ?? at) + 1;
    }
    return { record, at };
  }

  it('C6: the outage itself still backs off exponentially to the cap', () => {
    const { record, at } = afterOutage(10);
    const lost = step(record, { type: 'request_failed', epoch: 0, request: 'poll', code: 'timeout' }, at, 0);
    expect((lost.record.wakeAt ?? 0) - at).toBeGreaterThanOrEqual(record.policy.backoffMaxMs);
  });

  it('C6: a 503 without Retry-After right after the outage waits the base back-off, not the outage cap', () => {
    const { record, at } = afterOutage(10);
    const throttled = step(record, { type: 'request_failed', epoch: 0, request: 'poll', code: 503 }, at, 0);
    expect(throttled.outcome).toBe('applied');
    const wait = (throttled.record.wakeAt ?? 0) - at;
    expect(wait).toBeGreaterThanOrEqual(record.policy.backoffBaseMs);
    expect(wait).toBeLessThan(record.policy.backoffMaxMs);
  });

  it('C6: repeated 503s without Retry-After still grow exponentially on their own streak', () => {
    const { record, at } = afterOutage(10);
    const first = step(record, { type: 'request_failed', epoch: 0, request: 'poll', code: 503 }, at, 0);
    const at2 = (first.record.wakeAt ?? at) + 1;
    const second = step(first.record, { type: 'request_failed', epoch: 0, request: 'poll', code: 503 }, at2, 0);
    expect((second.record.wakeAt ?? 0) - at2).toBeGreaterThan((first.record.wakeAt ?? 0) - at);
  });

  it('C6: a 429 with Retry-After after the outage waits the Retry-After, never less', () => {
    const { record, at } = afterOutage(10);
    const throttled = step(record, throttledPoll(1_100), at, 0);
    const wait = (throttled.record.wakeAt ?? 0) - at;
    expect(wait).toBeGreaterThanOrEqual(1_100);
    expect(wait).toBeLessThan(record.policy.backoffMaxMs);
  });
});
