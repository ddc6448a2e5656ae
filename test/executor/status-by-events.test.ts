/**
 * Folding a page of task events into a status answer (issue 32), and the cursor the step keeps
 * with it: pure functions and the machine, no I/O (C10 input rounds from events, C13 digest, the
 * cursor never moves back).
 */
import { describe, expect, it } from 'vitest';
import { cursorAt, foldEvents } from '../../src/executor/status-by-events.js';
import type { EventPage, ServerEvent } from '../../src/executor/wire-port.js';
import { effectsOf, ev, step, workingRecord } from './fixtures.js';

const AT = '2026-12-06T00:00:00.000Z';
const ASK = (message: string) => ({ method: 'elicitation/create', params: { message } });

function page(events: ServerEvent[], lastSeq = events.at(-1)?.seq ?? 0): EventPage {
  return {
    taskId: 'task-1',
    events,
    cursor: `${events.at(-1)?.seq ?? 0}.abcdefghij`,
    lastSeq,
    status: 'working',
    done: false,
  };
}

describe('foldEvents', () => {
  it('C10 a reader from cursor 0 gets every unanswered input request, earlier rounds included', () => {
    const fold = foldEvents(
      [
        page([
          { seq: 1, at: AT, kind: 'status', status: 'working', statusMessage: null },
          { seq: 2, at: AT, kind: 'input_requested', key: 'a', request: ASK('first') },
          { seq: 3, at: AT, kind: 'status', status: 'input_required', statusMessage: null },
          { seq: 4, at: AT, kind: 'input_requested', key: 'b', request: ASK('second') },
          { seq: 5, at: AT, kind: 'input_answered', keys: ['b'] },
          { seq: 6, at: AT, kind: 'input_requested', key: 'c', request: ASK('third') },
        ]),
      ],
      workingRecord(),
      null,
    );
    expect(fold.snapshot.status).toBe('input_required');
    expect(fold.snapshot.inputRequests).toEqual({ a: ASK('first'), c: ASK('third') });
    expect(fold.eventCursor).toEqual({ cursor: '6.abcdefghij', seq: 6 });
  });

  it('a request whose status event is on the next page holds the cursor before it', () => {
    const fold = foldEvents(
      [
        page(
          [
            { seq: 4, at: AT, kind: 'progress', progress: { done: 1, total: 2, message: 'half' } },
            { seq: 5, at: AT, kind: 'input_requested', key: 'a', request: ASK('first') },
          ],
          6,
        ),
      ],
      workingRecord(),
      { cursor: '3.abcdefghij', seq: 3 },
    );
    expect(fold.snapshot).toMatchObject({ status: 'working', progress: { done: 1, total: 2, message: 'half' } });
    expect(fold.snapshot.inputRequests).toBeUndefined();
    expect(fold.eventCursor).toEqual({ cursor: '4.abcdefghij', seq: 4 });
  });

  it('C13 a completion carries its result digest; nothing new keeps the record status', () => {
    const done = foldEvents(
      [page([{ seq: 9, at: AT, kind: 'status', status: 'completed', statusMessage: null, resultDigest: 'd1' }])],
      workingRecord(),
      { cursor: '8.abcdefghij', seq: 8 },
    );
    expect(done).toMatchObject({ snapshot: { status: 'completed' }, resultDigest: 'd1' });
    const quiet = foldEvents([page([], 8)], workingRecord(), { cursor: '8.abcdefghij', seq: 8 });
    expect(quiet.snapshot.status).toBe('working');
    expect(quiet.eventCursor).toBeUndefined();
  });

  it('a page whose cursor stands past its last event (dropped progress) keeps the cursor: reads go on from it', () => {
    const trailing: EventPage = {
      ...page([{ seq: 4, at: AT, kind: 'progress', progress: { done: 1, total: 3 } }], 6),
      cursor: '6.abcdefghij',
    };
    const first = foldEvents([trailing], workingRecord(), { cursor: '3.abcdefghij', seq: 3 });
    // The server's cursor (past seqs 5-6, dropped), with the seq of the last event applied.
    expect(first.eventCursor).toEqual({ cursor: '6.abcdefghij', seq: 4 });
    // A request read next, its status event not yet: the cursor held before it is the same position.
    const next = foldEvents(
      [page([{ seq: 7, at: AT, kind: 'input_requested', key: 'a', request: ASK('first') }], 7)],
      workingRecord(),
      first.eventCursor!,
    );
    expect(next.eventCursor).toEqual({ cursor: '6.abcdefghij', seq: 6 });
  });

  it('cursorAt keeps the tag and refuses a cursor of another form', () => {
    expect(cursorAt('12.abcdefghij', 7)).toBe('7.abcdefghij');
    expect(cursorAt('opaque', 7)).toBeNull();
  });
});

describe('the machine keeps the cursor with the step', () => {
  it('status_observed with a cursor stores it; an older one never moves it back; eventsOff sticks (C6)', () => {
    const wake = step(workingRecord(), ev.wake);
    expect(effectsOf(wake.effects, 'poll_status')).toHaveLength(1);
    const seen = step(wake.record, (r) => ev.status(r, 'working', { eventCursor: { cursor: '5.abcdefghij', seq: 5 } }));
    expect(seen.outcome).toBe('applied');
    expect(seen.record.eventCursor).toEqual({ cursor: '5.abcdefghij', seq: 5 });
    const again = step(seen.record, ev.wake);
    expect(effectsOf(again.effects, 'poll_status')).toHaveLength(1);
    const older = step(again.record, (r) =>
      ev.status(r, 'working', { eventCursor: { cursor: '3.abcdefghij', seq: 3 }, eventsOff: true }),
    );
    expect(older.outcome).toBe('applied');
    expect(older.record.eventCursor).toEqual({ cursor: '5.abcdefghij', seq: 5 });
    expect(older.record.eventsOff).toBe(true);
  });
});
