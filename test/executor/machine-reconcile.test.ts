/**
 * Reconciling an UNKNOWN by key (C4): only an answered lookup spends one of `maxReconcileLookups`.
 * Gate seeds 168549, 237087, 296580 and 307973: a cancel-owed operation answered not found lost its
 * lookups to a server outage and an executor crash, and was left for an operator with the server
 * still able to settle it (cancel cadence: no request for 180-263 s).
 */
import { describe, expect, it } from 'vitest';
import type { OperationEvent } from '../../src/executor/events.js';
import type { ToolOperation } from '../../src/executor/operation.js';
import { cancellingRecord, effectsOf, ev, step, workingRecord } from './fixtures.js';

const notFound: OperationEvent = { type: 'not_found', epoch: 0, request: 'poll', afterExpiry: false };
const lookupLost: OperationEvent = {
  type: 'request_failed',
  epoch: 0,
  request: 'lookup',
  code: 'network',
  reason: 'connection refused',
};
const foundWorking: OperationEvent = { type: 'key_lookup_found', epoch: 0, taskId: 'task-1', status: 'working' };

/** The record after `event`, which must be applied; `at` defaults to its armed timer or just after. */
function apply(record: ToolOperation, event: OperationEvent, at = record.updatedAt + 10) {
  const result = step(record, event, at);
  if (result.outcome !== 'applied') throw new Error(`${event.type} in ${record.state}: ${result.reason}`);
  return result;
}

/** The retry timer a failure armed, fired at its time. */
function fireWake(record: ToolOperation) {
  expect(record.wakeAt).not.toBeNull();
  return apply(record, ev.wake(record), record.wakeAt ?? 0);
}

describe('C4: reconciling lookups from UNKNOWN', () => {
  it('lookups lost on the wire or to a restart are retried and spend none; the found task gets its cancel', () => {
    let record = apply(cancellingRecord(), notFound).record;
    expect(record.state).toBe('UNKNOWN');
    expect(record.attempts.lookup).toBe(1);
    // More lost lookups than the policy's reconciling ones: each retry still goes out.
    for (let i = 0; i < record.policy.maxReconcileLookups + 2; i++) {
      record = apply(record, lookupLost).record;
      const retry = fireWake(record);
      expect(effectsOf(retry.effects, 'lookup_key')).toHaveLength(1);
      record = retry.record;
    }
    // The executor dies with a lookup on the wire; the restart looks the key up again.
    const resumed = apply(record, { type: 'resumed', epoch: 0 });
    expect(effectsOf(resumed.effects, 'lookup_key')).toHaveLength(1);
    expect(resumed.record.attempts.reconcile).toBe(0);
    const found = apply(resumed.record, foundWorking);
    expect(found.record.state).toBe('CANCEL_REQUESTED');
    expect(found.record.attempts.reconcile).toBe(1);
    const resend = fireWake(found.record);
    expect(effectsOf(resend.effects, 'send_cancel')).toHaveLength(1);
  });

  it('answered lookups still stop at maxReconcileLookups: then the UNKNOWN is left for an operator', () => {
    let record = workingRecord();
    const max = record.policy.maxReconcileLookups;
    for (let i = 0; i < max; i++) {
      const unknown = apply(record, notFound);
      expect(effectsOf(unknown.effects, 'lookup_key')).toHaveLength(1);
      record = apply(unknown.record, foundWorking).record;
      expect(record.state).toBe('WORKING');
    }
    expect(record.attempts.reconcile).toBe(max);
    const last = apply(record, notFound);
    expect(last.record.state).toBe('UNKNOWN');
    expect(effectsOf(last.effects, 'lookup_key')).toEqual([]);
  });
});
