/**
 * A pushed status in the machine (issue 17 item 2): it never changes state, only brings the read
 * forward; due now in WORKING the read leaves in the same step with the timer disarmed, so one read
 * is on the wire at a time (two `input_required` answers would open the same round twice: gate
 * seed 341 when the timer stayed armed).
 */
import { describe, expect, it } from 'vitest';
import type { OperationEvent } from '../../src/executor/events.js';
import { effectsOf, ev, step, workingRecord } from './fixtures.js';

const hint = (status: 'completed' | 'working' | 'input_required'): OperationEvent => ({
  type: 'notification',
  epoch: 0,
  status,
});

describe('pushed status hints', () => {
  it('C2: a pushed completion issues one status read in the same step; the state stays WORKING, nothing is fetched', () => {
    const record = workingRecord();
    expect(record.wakeAt).not.toBeNull();
    const pushed = step(record, hint('completed'));
    expect(pushed.outcome).toBe('applied');
    expect(pushed.record.state).toBe('WORKING');
    expect(pushed.record.lastServerStatus).toBe('working');
    expect(effectsOf(pushed.effects, 'poll_status')).toHaveLength(1);
    expect(effectsOf(pushed.effects, 'fetch_result')).toEqual([]);
    expect(pushed.record.wakeAt).toBeNull();
    // The read's answer decides, and arms the next poll.
    const read = step(pushed.record, (r) => ev.status(r, 'working'));
    expect(read.record.state).toBe('WORKING');
    expect(read.record.wakeAt).not.toBeNull();
  });

  it('one read on the wire at a time: a second push while it is out is ignored', () => {
    const pushed = step(workingRecord(), hint('input_required'));
    expect(step(pushed.record, hint('completed'))).toMatchObject({ outcome: 'ignored' });
  });

  it('a push with no news (the status already read) issues nothing', () => {
    expect(step(workingRecord(), hint('working'))).toMatchObject({ outcome: 'ignored', reason: 'no_news' });
  });
});
