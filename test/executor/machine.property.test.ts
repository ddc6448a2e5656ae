import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/digest.js';
import { TERMINAL_STATUSES, TASK_STATUSES } from '../../src/core/task.js';
import type { OperationEvent, RetriedRequest } from '../../src/executor/events.js';
import { next, type StepResult } from '../../src/executor/machine.js';
import { LOCAL_STATES, type LocalState, type ToolOperation } from '../../src/executor/operation.js';
import { canTransition, isReceipted } from '../../src/executor/transitions.js';
import { cancellingRecord, effectsOf, fetchingRecord, fresh, run, T0, workingRecord, ev } from './fixtures.js';

/**
 * Random event sequences, including duplicates, reorders, stale and future epochs, late completions
 * after a cancel and truncated results. Templates are filled in against the current record so that
 * most events are plausible (current epoch, latest poll, current generation) and some are not.
 */
const PAYLOADS = [{ content: [{ type: 'text', text: 'a' }] }, { code: -32603, message: 'boom' }, null];
const KEYS = ['a', 'b', 'c'] as const;

const epochMode = fc.constantFrom('current', 'current', 'current', 'current', 'stale', 'future');
const status = fc.constantFrom(...TASK_STATUSES);
const terminal = fc.constantFrom(...TERMINAL_STATUSES);
const rarely = fc.constantFrom(false, false, false, true);
const genMode = fc.constantFrom('current', 'current', 'stale', 'future');

type Template = { readonly epoch: string; readonly make: (r: ToolOperation, epoch: number) => OperationEvent };

const t = <A>(arb: fc.Arbitrary<A>, make: (a: A, r: ToolOperation, epoch: number) => OperationEvent) =>
  fc.tuple(epochMode, arb).map(([epoch, a]): Template => ({ epoch, make: (r, e) => make(a, r, e) }));

const generation = (mode: string, r: ToolOperation) =>
  mode === 'current' ? r.cancelGeneration : mode === 'stale' ? r.cancelGeneration - 1 : r.cancelGeneration + 1;

const template: fc.Arbitrary<Template> = fc.oneof(
  { weight: 2, arbitrary: t(fc.constant(0), (_a, _r, epoch) => ({ type: 'submit_sent', epoch })) },
  {
    weight: 3,
    arbitrary: t(fc.tuple(status, fc.constantFrom('task-1', 'task-2')), ([s, taskId], _r, epoch) => ({
      type: 'submit_acked',
      epoch,
      taskId,
      status: s,
      pollIntervalMs: 1_000,
      expiresAt: T0 + 120_000,
    })),
  },
  { weight: 2, arbitrary: t(fc.constant(0), (_a, _r, epoch) => ({ type: 'submit_lost', epoch, reason: 'timeout' })) },
  {
    weight: 1,
    arbitrary: t(fc.constant(0), (_a, _r, epoch) => ({
      type: 'submit_rejected',
      epoch,
      code: 'invalid_argument',
      message: 'x',
    })),
  },
  {
    weight: 2,
    arbitrary: t(fc.tuple(status, fc.constantFrom('task-1', 'task-2')), ([s, taskId], _r, epoch) => ({
      type: 'key_lookup_found',
      epoch,
      taskId,
      status: s,
    })),
  },
  { weight: 2, arbitrary: t(fc.constant(0), (_a, _r, epoch) => ({ type: 'key_lookup_never_created', epoch })) },
  { weight: 1, arbitrary: t(fc.constant(0), (_a, _r, epoch) => ({ type: 'key_lookup_unsupported', epoch })) },
  {
    weight: 10,
    arbitrary: t(fc.constantFrom('current', 'current', 'current', 'old'), (mode, r, epoch) => ({
      type: 'wake',
      epoch,
      dueAt: mode === 'current' && r.wakeAt !== null ? r.wakeAt : T0 - 1,
    })),
  },
  {
    weight: 10,
    arbitrary: t(
      fc.tuple(
        fc.constantFrom('latest', 'latest', 'older', 'future'),
        status,
        fc.subarray([...KEYS]),
        fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
      ),
      ([seqMode, s, keys, serverEpoch], r, epoch) => ({
        type: 'status_observed',
        epoch,
        seq:
          seqMode === 'latest'
            ? r.pollCursor.issued
            : seqMode === 'older'
              ? r.pollCursor.issued - 1
              : r.pollCursor.issued + 1,
        status: s,
        inputRequests: Object.fromEntries(keys.map((k) => [k, { method: 'elicitation/create', params: { k } }])),
        ...(serverEpoch === undefined ? {} : { serverEpoch }),
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: t(fc.option(status, { nil: undefined }), (s, _r, epoch) => ({
      type: 'notification',
      epoch,
      ...(s === undefined ? {} : { status: s }),
    })),
  },
  {
    weight: 4,
    arbitrary: t(
      fc.tuple(fc.constantFrom('current', 'current', 'old', 'next'), fc.constantFrom(...KEYS, 'z')),
      ([mode, key], r, epoch) => ({
        type: 'input_answered',
        epoch,
        round: mode === 'current' ? r.input.round : mode === 'old' ? r.input.round - 1 : r.input.round + 1,
        key,
        reply: { action: 'accept' },
      }),
    ),
  },
  {
    weight: 3,
    arbitrary: t(fc.subarray([...KEYS], { minLength: 1 }), (keys, r, epoch) => ({
      type: 'input_sent',
      epoch,
      round: r.input.round,
      keys,
    })),
  },
  {
    weight: 4,
    arbitrary: t(genMode, (mode, r, epoch) => ({
      type: 'cancel_requested',
      epoch,
      expectedGeneration: generation(mode, r),
    })),
  },
  {
    weight: 4,
    arbitrary: t(fc.tuple(genMode, fc.option(status, { nil: undefined })), ([mode, s], r, epoch) => ({
      type: 'cancel_acked',
      epoch,
      generation: generation(mode, r),
      ...(s === undefined ? {} : { status: s }),
    })),
  },
  {
    weight: 2,
    arbitrary: t(fc.tuple(genMode, fc.option(terminal, { nil: undefined })), ([mode, s], r, epoch) => ({
      type: 'cancel_rejected_terminal',
      epoch,
      generation: generation(mode, r),
      ...(s === undefined ? {} : { status: s }),
    })),
  },
  {
    weight: 8,
    arbitrary: t(
      fc.tuple(terminal, fc.constantFrom(...PAYLOADS), rarely, rarely, rarely),
      ([s, payload, truncated, malformed, badDigest], _r, epoch) => ({
        type: 'result_fetched',
        epoch,
        status: s,
        payload,
        digest: badDigest ? digestOf({ wrong: true }) : digestOf(payload),
        truncated,
        malformed,
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: t(fc.option(fc.boolean(), { nil: undefined }), (afterExpiry, _r, epoch) => ({
      type: 'not_found',
      epoch,
      ...(afterExpiry === undefined ? {} : { afterExpiry }),
    })),
  },
  {
    weight: 3,
    arbitrary: t(
      fc.tuple(
        fc.constantFrom<RetriedRequest>('poll', 'fetch', 'cancel', 'lookup', 'input'),
        fc.constantFrom<429 | 503 | 'timeout'>(429, 503, 'timeout'),
        fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: undefined }),
      ),
      ([request, code, retryAfterMs], _r, epoch) => ({
        type: 'request_failed',
        epoch,
        request,
        code,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: t(
      fc.constantFrom<'budget' | 'local_timeout' | 'disconnect'>('budget', 'local_timeout', 'disconnect'),
      (reason, _r, epoch) => ({
        type: 'budget_exhausted',
        epoch,
        reason,
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: t(fc.constantFrom('new', 'reuse'), (mode, r, epoch) => ({
      type: 'resubmit',
      epoch,
      submissionKey: mode === 'new' ? `key-${r.priorSubmissionKeys.length + 2}` : r.submissionKey,
    })),
  },
  { weight: 1, arbitrary: t(fc.constant(0), (_a, _r, epoch) => ({ type: 'abandon', epoch, reason: 'policy' })) },
  { weight: 2, arbitrary: t(fc.constant(0), (_a, _r, epoch) => ({ type: 'resumed', epoch })) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: -1, max: 2 }).map((delta): Template => ({
      epoch: 'current',
      make: (r) => ({ type: 'rollback', newEpoch: r.executionEpoch + delta }),
    })),
  },
);

function materialize(tpl: Template, r: ToolOperation): OperationEvent {
  const epoch =
    tpl.epoch === 'current' ? r.executionEpoch : tpl.epoch === 'stale' ? r.executionEpoch - 1 : r.executionEpoch + 1;
  return tpl.make(r, epoch);
}

const start = fc.constantFrom<() => ToolOperation>(
  () => fresh(),
  () => fresh({ budgetMs: 20_000 }),
  () => workingRecord(),
  () => fetchingRecord('completed'),
  () => fetchingRecord('failed'),
  () => cancellingRecord(),
  () => run(cancellingRecord(), [(r) => ev.cancelAcked(r, 'cancelled')]).record,
  () => run(fresh(), [ev.sent, ev.lost]).record,
  () =>
    run(workingRecord(), [
      ev.wake,
      (r) => ev.status(r, 'input_required', { inputRequests: { a: { method: 'elicitation/create', params: {} } } }),
    ]).record,
);

const scenario = fc.record({
  start,
  steps: fc.array(
    fc.tuple(
      template,
      fc.integer({ min: 0, max: 5_000 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
    ),
    {
      minLength: 1,
      maxLength: 80,
    },
  ),
});

const visited = new Set<LocalState>();
const outcomes = { accepts: 0, completedAccepts: 0, lateEffects: 0, ignored: 0, rejected: 0 };

function isVerifiedFetch(event: OperationEvent): boolean {
  if (event.type !== 'result_fetched' || event.truncated || event.malformed) return false;
  return digestOf(event.payload) === event.digest;
}

/** Checks one step against every invariant; returns a message for the first violation. */
function violation(
  before: ToolOperation,
  event: OperationEvent,
  result: StepResult,
  now: number,
  receipts: number,
): string | null {
  const after = result.record;
  if (result.outcome !== 'applied') {
    if (result.outcome === 'rejected' && result.reason === 'transition_not_allowed')
      return 'attempted a move outside the table';
    if (after !== before || result.effects.length !== 0) return `${result.outcome} step changed the record or emitted`;
    if (event.type !== 'rollback' && event.epoch < before.executionEpoch && result.outcome !== 'ignored') {
      return 'stale epoch not ignored';
    }
    return null;
  }
  if (event.type !== 'rollback' && event.epoch !== before.executionEpoch) return 'applied an event of another epoch';
  if (before.state !== after.state) {
    if (!canTransition(before.state, after.state)) return `transition ${before.state} -> ${after.state} not in table`;
    const last = after.history.at(-1);
    if (after.history.length !== before.history.length + 1 || last?.from !== before.state || last.to !== after.state) {
      return 'history does not record the transition';
    }
  } else if (after.history.length !== before.history.length) return 'history grew without a transition';
  if (isReceipted(before.state) && !isReceipted(after.state)) return `left receipted ${before.state}`;
  if (before.state === 'CANCELLED_ACCEPTED' && after.state === 'ACCEPTED') return 'C3: accepted after a won cancel';
  if (after.executionEpoch < before.executionEpoch || after.cancelGeneration < before.cancelGeneration)
    return 'went backwards';

  const accepts = effectsOf(result.effects, 'accept_terminal');
  if (accepts.length > 0) {
    if (receipts + accepts.length > 1) return 'C1: second accept_terminal';
    if (isReceipted(before.state)) return 'C1: accept_terminal from a receipted state';
    if (!isReceipted(after.state)) return 'accept_terminal without entering a receipted state';
    const a = accepts[0]!.acceptance;
    if (a.status === 'completed' || a.status === 'failed') {
      if (before.state !== 'FETCHING_RESULT' || !isVerifiedFetch(event))
        return 'C2: completed/failed accepted without verified fetch';
      if (event.type !== 'result_fetched' || a.resultDigest !== event.digest || a.status !== event.status) {
        return 'C2: accepted digest/status differ from the fetched result';
      }
      if (before.lastServerStatus !== a.status) return 'C2: accepted status differs from the observed one';
    }
    if (a.cancelGeneration !== after.cancelGeneration || a.executionEpoch !== after.executionEpoch) {
      return 'acceptance not stamped with the record generation/epoch';
    }
  } else if (!isReceipted(before.state) && isReceipted(after.state))
    return 'entered a receipted state without accept_terminal';

  for (const cancel of effectsOf(result.effects, 'send_cancel')) {
    if (after.state !== 'CANCEL_REQUESTED' || cancel.generation !== after.cancelGeneration) {
      return 'C8: send_cancel not recorded as CANCEL_REQUESTED with its generation';
    }
  }
  if (event.type === 'budget_exhausted' && result.effects.some((e) => e.type !== 'stop_waiting'))
    return 'C9: more than stop_waiting';
  if (
    result.effects.some((e) => e.type === 'send_cancel') &&
    event.type !== 'cancel_requested' &&
    before.state !== 'CANCEL_REQUESTED'
  ) {
    return 'C9: a cancel sent without a cancel request';
  }
  if (after.state === 'INPUT_REQUIRED') {
    const polls = result.effects.filter(
      (e) => e.type === 'poll_status' || (e.type === 'schedule_wake' && e.purpose === 'poll'),
    );
    if (polls.length > 0) return 'C10: polled while INPUT_REQUIRED';
  }
  for (const submit of effectsOf(result.effects, 'send_submit')) {
    const fresh = before.state === 'NOT_FOUND_SAFE' || before.state === 'NEVER_CREATED';
    const resend =
      before.state === 'SUBMITTING' && before.attempts.submit === 0 && submit.submissionKey === before.submissionKey;
    if (!fresh && !resend) return `C5: send_submit from ${before.state}`;
    if (
      fresh &&
      (submit.submissionKey === before.submissionKey || before.priorSubmissionKeys.includes(submit.submissionKey))
    ) {
      return 'C5: resubmission reused a key';
    }
  }
  for (const wake of effectsOf(result.effects, 'schedule_wake')) {
    if (wake.atMs < now) return 'wake scheduled in the past';
    const deadline = after.policy.deadlineAt;
    if (deadline !== null && wake.atMs > Math.max(deadline, now)) return 'C6: wake past the wait budget';
  }
  return null;
}

describe('operation machine properties', () => {
  it('never a second receipt, never completed/failed without a verified fetch, never out of a receipted state, only table moves', () => {
    fc.assert(
      fc.property(scenario, ({ start: make, steps }) => {
        let record = make();
        let now = record.updatedAt;
        let receipts = 0;
        visited.add(record.state);
        for (const [tpl, dt, random] of steps) {
          now += dt;
          const event = materialize(tpl, record);
          const result = next(record, event, now, random);
          const problem = violation(record, event, result, now, receipts);
          if (problem !== null) {
            throw new Error(
              `${problem}: ${event.type} in ${record.state} -> ${result.record.state} (${result.outcome})`,
            );
          }
          const accepted = effectsOf(result.effects, 'accept_terminal');
          receipts += accepted.length;
          outcomes.accepts += accepted.length;
          outcomes.completedAccepts += accepted.filter((e) => e.acceptance.status === 'completed').length;
          outcomes.lateEffects += effectsOf(result.effects, 'record_late_effect').length;
          if (result.outcome === 'ignored') outcomes.ignored += 1;
          if (result.outcome === 'rejected') outcomes.rejected += 1;
          record = result.record;
          visited.add(record.state);
        }
      }),
      { numRuns: 1_500 },
    );
  });

  it('the sequences above reached every local state and every kind of outcome (the property is not vacuous)', () => {
    expect(LOCAL_STATES.filter((state) => !visited.has(state))).toEqual([]);
    expect(outcomes.completedAccepts).toBeGreaterThan(0);
    expect(outcomes.lateEffects).toBeGreaterThan(0);
    expect(outcomes.ignored).toBeGreaterThan(0);
    expect(outcomes.rejected).toBeGreaterThan(0);
  });

  it('next() is total: arbitrary junk events never throw', () => {
    fc.assert(
      fc.property(fc.anything(), fc.integer(), (junk, now) => {
        const r = workingRecord();
        const result = next(r, junk as OperationEvent, now, 0.5);
        expect(['applied', 'ignored', 'rejected']).toContain(result.outcome);
      }),
      { numRuns: 300 },
    );
  });
});
