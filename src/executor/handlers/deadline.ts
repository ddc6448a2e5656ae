import type { Draft } from '../step.js';

/**
 * Polling is paused while the gate is asked (C10), but the wait budget still holds (C9): with no
 * resend timer armed, the one timer is the deadline, where local waiting stops.
 */
export function awaitDeadline(d: Draft): Draft {
  const deadline = d.record.policy.deadlineAt;
  if (d.record.wakeAt === null && deadline !== null) d.wake({ atMs: Math.max(deadline, d.now), purpose: 'deadline' });
  return d;
}
