/**
 * C13 in the machine: every terminal report is compared with the first, wherever it comes from. A
 * key lookup whose task object inlines the result, and a status read answered after the task was
 * already seen terminal, are reports too. Gate seeds 46469 and 70262: a lookup showed result R0, the
 * read still on the wire showed R0 again, neither was kept, and the fetch's changed result R1 was
 * accepted.
 */
import { describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/digest.js';
import type { OperationEvent } from '../../src/executor/events.js';
import type { ToolOperation } from '../../src/executor/operation.js';
import { effectsOf, ev, RESULT, step, workingRecord } from './fixtures.js';

const CHANGED = { content: [...RESULT.content, { type: 'text', text: 'read 1' }] };
const R0 = digestOf(RESULT);
const R1 = digestOf(CHANGED);

function apply(record: ToolOperation, event: OperationEvent | ((r: ToolOperation) => OperationEvent), at?: number) {
  const result = step(record, event, at);
  if (result.outcome !== 'applied') throw new Error(`${result.outcome} in ${record.state}: ${result.reason}`);
  return result.record;
}

/** WORKING with a status read on the wire (seq 1), then a 404 and the key lookup's answer `found`. */
function foundByLookup(resultDigest?: string): ToolOperation {
  const polling = apply(workingRecord(), (r) => ev.wake(r));
  expect(polling.pollCursor.issued).toBe(1);
  const unknown = apply(polling, { type: 'not_found', epoch: 0, request: 'poll', afterExpiry: false });
  expect(unknown.state).toBe('UNKNOWN');
  return apply(unknown, {
    type: 'key_lookup_found',
    epoch: 0,
    taskId: 'task-1',
    status: 'completed',
    ...(resultDigest === undefined ? {} : { resultDigest }),
  });
}

const fetched = (r: ToolOperation, payload: unknown) =>
  ev.result(r, 'completed', { payload, digest: digestOf(payload) });

describe('C13: reports other than the fetch', () => {
  it('a key lookup that inlines the result: a changed result fetched afterwards is never accepted', () => {
    const found = foundByLookup(R0);
    expect(found.state).toBe('TERMINAL_OBSERVED');
    expect(found.observedTerminal).toMatchObject({ status: 'completed', resultDigest: R0 });
    const fetching = apply(found, (r) => ev.wake(r));
    expect(fetching.state).toBe('FETCHING_RESULT');
    const after = step(fetching, (r) => fetched(r, CHANGED));
    expect(after.record.state).toBe('UNKNOWN');
    expect(after.record.evidence.at(-1)).toMatchObject({
      kind: 'result_changed',
      observed: { resultDigest: R0 },
      reported: { resultDigest: R1 },
    });
    expect(effectsOf(after.effects, 'accept_terminal')).toEqual([]);
    // The same result as the lookup showed is accepted.
    expect(apply(fetching, (r) => fetched(r, RESULT)).state).toBe('ACCEPTED');
  });

  it('a key lookup whose result differs from the one a status read showed first: UNKNOWN, nothing accepted', () => {
    const observed = apply(workingRecord(), (r) => ev.wake(r));
    const terminal = apply(observed, (r) => ev.status(r, 'completed', { resultDigest: R0 }));
    const fetching = apply(terminal, (r) => ev.wake(r));
    const unknown = apply(fetching, { type: 'not_found', epoch: 0, request: 'fetch', afterExpiry: false });
    expect(unknown.state).toBe('UNKNOWN');
    const after = step(unknown, {
      type: 'key_lookup_found',
      epoch: 0,
      taskId: 'task-1',
      status: 'completed',
      resultDigest: R1,
    });
    expect(after.record.state).toBe('UNKNOWN');
    expect(after.record.evidence.at(-1)?.kind).toBe('result_changed');
  });

  it('a status read answered after the lookup showed the task terminal: kept, and compared with the fetch', () => {
    // The lookup showed `completed` without the result (a wire whose lookup does not inline it).
    const found = foundByLookup();
    expect(found.observedTerminal?.resultDigest).toBeUndefined();
    // The read that was on the wire lands now, with the result inlined: its digest is kept.
    const late = step(found, (r) => ev.status(r, 'completed', { seq: 1, resultDigest: R0 }));
    expect(late.outcome).toBe('applied');
    expect(late.record.state).toBe('TERMINAL_OBSERVED');
    expect(late.record.observedTerminal).toMatchObject({ status: 'completed', resultDigest: R0 });
    expect(late.effects.filter((e) => e.type !== 'emit_status')).toEqual([]);
    const fetching = apply(late.record, (r) => ev.wake(r));
    expect(step(fetching, (r) => fetched(r, CHANGED)).record.state).toBe('UNKNOWN');
  });

  it('a late status read with another result or status than observed: UNKNOWN before any fetch', () => {
    const found = foundByLookup(R0);
    const changedResult = step(found, (r) => ev.status(r, 'completed', { seq: 1, resultDigest: R1 }));
    expect(changedResult.record.state).toBe('UNKNOWN');
    expect(changedResult.record.evidence.at(-1)?.kind).toBe('result_changed');
    const fetching = apply(found, (r) => ev.wake(r));
    const rewritten = step(fetching, (r) => ev.status(r, 'cancelled', { seq: 1 }));
    expect(rewritten.record.state).toBe('UNKNOWN');
    expect(rewritten.record.evidence.at(-1)?.kind).toBe('terminal_status_changed');
  });

  it('a status read answered with the result while a racing 404 had sent the operation to UNKNOWN: kept for the lookup and the fetch', () => {
    const polling = apply(workingRecord(), (r) => ev.wake(r));
    const unknown = apply(polling, { type: 'not_found', epoch: 0, request: 'poll', afterExpiry: false });
    expect(unknown.state).toBe('UNKNOWN');
    const late = step(unknown, (r) => ev.status(r, 'completed', { seq: 1, resultDigest: R0 }));
    expect(late.outcome).toBe('applied');
    expect(late.record.state).toBe('UNKNOWN');
    expect(late.record.observedTerminal).toMatchObject({ status: 'completed', resultDigest: R0 });
    // The lookup then shows another result: not followed.
    const found = { type: 'key_lookup_found', epoch: 0, taskId: 'task-1', status: 'completed' } as const;
    const changed = step(late.record, { ...found, resultDigest: R1 });
    expect(changed.record.state).toBe('UNKNOWN');
    expect(changed.record.evidence.at(-1)?.kind).toBe('result_changed');
    // Or the same one, and the fetch another: not accepted.
    const fetching = apply(apply(late.record, { ...found, resultDigest: R0 }), (r) => ev.wake(r));
    expect(fetching.state).toBe('FETCHING_RESULT');
    expect(step(fetching, (r) => fetched(r, CHANGED)).record.state).toBe('UNKNOWN');
  });

  it('a late `working` answer, a stale epoch and an unissued read move nothing', () => {
    const found = foundByLookup(R0);
    const working = step(found, (r) => ev.status(r, 'working', { seq: 1 }));
    expect(working.outcome).toBe('ignored');
    expect(working.record).toBe(found);
    const stale = step({ ...found, serverEpoch: 3 }, (r) =>
      ev.status(r, 'completed', { seq: 1, serverEpoch: 2, resultDigest: R1 }),
    );
    expect(stale.outcome).toBe('ignored');
    expect(step(found, (r) => ev.status(r, 'completed', { seq: 9, resultDigest: R1 })).outcome).toBe('rejected');
  });

  it('a cancel answered with a completion, then the late read inlining the result: the fetch is compared with it', () => {
    // A status read on the wire (seq 1), then the cancel; its answer says the task completed first.
    const polled = apply(workingRecord(), (r) => ev.wake(r));
    const cancelling = apply(polled, (r) => ev.cancel(r));
    const won = apply(cancelling, (r) => ev.cancelAcked(r, 'completed'));
    expect(won.state).toBe('TERMINAL_OBSERVED');
    const late = apply(won, (r) => ev.status(r, 'completed', { seq: r.pollCursor.issued, resultDigest: R0 }));
    expect(late.observedTerminal?.resultDigest).toBe(R0);
    const fetching = apply(late, (r) => ev.wake(r));
    expect(step(fetching, (r) => fetched(r, CHANGED)).record.state).toBe('UNKNOWN');
  });
});

describe('C13: a terminal outcome the wire received unasked (2025-11-25 side channel)', () => {
  const heard = (r: ToolOperation, resultDigest = R0): OperationEvent => ({
    type: 'terminal_heard',
    epoch: r.executionEpoch,
    status: 'completed',
    resultDigest,
  });

  it('is kept at once and moves nothing; a `cancelled` read after it is a change, never a cancelled receipt', () => {
    // Gate seed 6457 on mcp-2025-11-25: the completion came on the side channel, the executor died
    // before reading again, and its successor's read showed `cancelled` (a rewriting server).
    const kept = apply(workingRecord(), heard);
    expect(kept.state).toBe('WORKING');
    expect(kept.observedTerminal).toMatchObject({ status: 'completed', resultDigest: R0 });
    const cancelling = apply(kept, ev.cancel);
    const polling = apply(cancelling, (r) => ev.wake(r));
    const after = step(polling, (r) => ev.status(r, 'cancelled'));
    expect(after.record.state).toBe('UNKNOWN');
    expect(after.record.evidence.at(-1)).toMatchObject({
      kind: 'terminal_status_changed',
      observed: { status: 'completed', resultDigest: R0 },
      reported: { status: 'cancelled' },
    });
    expect(effectsOf(after.effects, 'accept_terminal')).toEqual([]);
    // The same completion read afterwards is fetched and accepted as usual.
    const terminal = apply(kept, (r) => ev.wake(r));
    const observed = apply(terminal, (r) => ev.status(r, 'completed', { resultDigest: R0 }));
    expect(
      apply(
        apply(observed, (r) => ev.wake(r)),
        (r) => fetched(r, RESULT),
      ).state,
    ).toBe('ACCEPTED');
  });

  it('another outcome than the one observed first is a change; after a won cancel a completion flags the effect', () => {
    const first = apply(workingRecord(), heard);
    expect(apply(first, (r) => heard(r, R1)).state).toBe('UNKNOWN');
    expect(step(first, heard).outcome).toBe('ignored');
    const won = apply(
      apply(apply(workingRecord(), ev.cancel), (r) => ev.wake(r)),
      (r) => ev.status(r, 'cancelled'),
    );
    expect(won.state).toBe('CANCELLED_ACCEPTED');
    expect(apply(won, heard).state).toBe('EFFECT_RECONCILIATION_REQUIRED');
  });
});
