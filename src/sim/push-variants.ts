/**
 * Broken executors around listen streams (issue 17 item 2), for the tests that prove the gate
 * catches them: test-only `next()` hooks, which the real executor steps with over the series'
 * listen streams and push faults.
 */
import { next as realNext, type NextFn } from '../executor/machine.js';
import type { BrokenVariant } from './variants.js';

/**
 * Takes a pushed status as the task's, without reading it: the push becomes a status observation
 * of a read that never happened. A late or reordered push is an older snapshot: a `working` pushed
 * while the round waits for its approval closes the round, and the next read opens it again, asking
 * the approval gate a second time for the same request (C10).
 */
const trustPushedStatus: NextFn = (record, event, now, random) => {
  if (event.type !== 'notification' || event.status === undefined) return realNext(record, event, now, random);
  const seq = record.pollCursor.issued + 1;
  return realNext(
    { ...record, pollCursor: { ...record.pollCursor, issued: seq } },
    { type: 'status_observed', epoch: event.epoch, seq, status: event.status },
    now,
    random,
  );
};

/** Polls once an hour while it listens: every change is expected on the stream. */
const RELIANT_POLL_MS = 3_600_000;

/**
 * Relies on the stream instead of polling: a next poll an hour away (pushes still bring it
 * forward). A lost push of the completion then leaves the operation waiting past the liveness bound
 * (the fallback to polling at the server's interval is what this breaks).
 */
const relyOnPushes: NextFn = (record, event, now, random) => {
  const step = realNext(record, event, now, random);
  if (step.outcome !== 'applied' || step.record.state !== 'WORKING') return step;
  const poll = step.effects.find((e) => e.type === 'schedule_wake' && e.purpose === 'poll');
  if (poll === undefined) return step;
  const atMs = now + RELIANT_POLL_MS;
  return {
    ...step,
    record: { ...step.record, wakeAt: atMs },
    effects: step.effects.map((e) => (e === poll ? { type: 'schedule_wake', atMs, purpose: 'poll' } : e)),
  };
};

export const PUSH_BROKEN_VARIANTS: readonly BrokenVariant[] = [
  {
    name: 'take a pushed status as read',
    breaks: 'C10',
    faults: ['push_late', 'push_reordered', 'input_replay'],
    hooks: { next: trustPushedStatus },
  },
  {
    name: 'rely on pushes instead of polling',
    breaks: 'liveness',
    faults: ['push_lost'],
    hooks: { next: relyOnPushes },
  },
];
