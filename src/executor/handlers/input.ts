/**
 * C10: input_required pauses auto-poll and hands the round's requests to the approval gate; a reply
 * must name the round it answers; a replayed round or a key already answered is ignored.
 */
import type { EventOf } from '../events.js';
import { nextPoll } from '../schedule.js';
import { ignored, rejected, type Draft, type StepResult } from '../step.js';
import { awaitDeadline } from './deadline.js';
import { onPreTaskAnswered } from './submission.js';

/**
 * Opens a new round for the keys of `requests` that were never answered and are not being sent.
 * Returns false (and changes nothing) when there is none: the snapshot replays an earlier round.
 */
export function openRound(d: Draft, requests: Readonly<Record<string, unknown>> | undefined): boolean {
  const input = d.record.input;
  const fresh = Object.entries(requests ?? {}).filter(
    ([key]) => !input.answeredKeys.includes(key) && !(key in input.unsent),
  );
  if (fresh.length === 0) return false;
  const round = input.round + 1;
  const pending = Object.fromEntries(fresh);
  d.set({ input: { ...input, round, pending } }).moveTo('INPUT_REQUIRED');
  // Entering from WORKING pauses polling; a resend timer already armed in INPUT_REQUIRED stays.
  if (d.base.state !== 'INPUT_REQUIRED') d.clearWake();
  awaitDeadline(d).emit({ type: 'ask_approval', round, requests: pending });
  return true;
}

export function hasFreshInput(d: Draft, requests: Readonly<Record<string, unknown>> | undefined): boolean {
  const input = d.base.input;
  return Object.keys(requests ?? {}).some((key) => !input.answeredKeys.includes(key) && !(key in input.unsent));
}

export function onInputAnswered(d: Draft, ev: EventOf<'input_answered'>): StepResult {
  const r = d.base;
  // A round the server asked for in answer to the submission itself, before any task (MRTR).
  if (r.state === 'SUBMITTING') return onPreTaskAnswered(d, ev);
  if (ev.round < r.input.round) return ignored(r, 'stale_round');
  if (ev.round > r.input.round) return rejected(r, 'unknown_round');
  // The round was closed (the server moved on, a cancel, a terminal status): a late gate answer.
  if (r.state !== 'INPUT_REQUIRED') return ignored(r, 'stale_round');
  if (r.input.answeredKeys.includes(ev.key) || ev.key in r.input.unsent) return ignored(r, 'replayed_input');
  if (!(ev.key in r.input.pending)) return rejected(r, 'unknown_input_key');
  const taskId = r.taskId;
  if (taskId === null) return rejected(r, 'no_task_id');
  // The gate's reply goes out at once, like a cancel: one request, not a poll nor a retry. A lost
  // reply is resent by the timer, which waits for any Retry-After (C6).
  d.set({ input: { ...r.input, unsent: { ...r.input.unsent, [ev.key]: ev.reply } } }).countAttempt('input');
  return d.emit({ type: 'send_input', taskId, round: ev.round, responses: { [ev.key]: ev.reply } }).done();
}

export function onInputSent(d: Draft, ev: EventOf<'input_sent'>): StepResult {
  const r = d.base;
  const acked = ev.keys.filter((key) => key in r.input.unsent);
  if (acked.length === 0) return ignored(r, 'replayed_input');
  const unsent = Object.fromEntries(Object.entries(r.input.unsent).filter(([key]) => !acked.includes(key)));
  const answeredKeys = [...r.input.answeredKeys, ...acked];
  d.set({ input: { ...r.input, unsent, answeredKeys } }).resetFailures();
  const allAnswered = Object.keys(r.input.pending).every((key) => answeredKeys.includes(key));
  if (r.state === 'INPUT_REQUIRED' && allAnswered && Object.keys(unsent).length === 0) {
    // Every request of the round is answered: auto-poll resumes.
    d.set({ input: { ...d.record.input, pending: {} } }).moveTo('WORKING');
    return d.wake(nextPoll(d.record, d.now, d.random)).done();
  }
  return awaitDeadline(d).done();
}
