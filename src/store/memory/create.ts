import { taskNotFound, TerminusError } from '../../core/errors.js';
import { isExpired, type TaskRecord } from '../../core/task.js';
import { tooManyLive } from '../live-cap.js';
import type { CreateOutcome, KeyLookup, NewTask } from '../port.js';
import { appendEvents } from './events.js';
import { copy, keyOf, type MemoryState } from './state.js';
import { countLive } from './worker.js';

/** The record a fresh task starts as; the SQLite column defaults say the same. */
export function initialRecord(input: NewTask): TaskRecord {
  return {
    id: input.id,
    owner: input.owner,
    tool: input.tool,
    args: copy(input.args),
    requestDigest: input.requestDigest,
    submissionKey: input.submissionKey,
    wire: input.wire,
    status: 'working',
    statusMessage: input.statusMessage ?? null,
    progress: null,
    createdAt: input.now,
    updatedAt: input.now,
    ttlMs: input.ttlMs,
    pollIntervalMs: input.pollIntervalMs,
    keepAliveMs: input.keepAliveMs,
    terminalAt: null,
    leaseOwner: input.lease?.workerId ?? null,
    leaseExpiresAt: input.lease === undefined ? null : input.now + input.lease.leaseMs,
    // Created leased counts as the first claim: epoch 1, as `claim` would have set it.
    epoch: input.lease === undefined ? 0 : 1,
    cancelRequested: false,
    checkpoint: null,
    inputRequests: {},
    inputResponses: {},
    result: null,
    error: null,
    resultDigest: null,
    lateOutcome: null,
    eventSeq: 0,
  };
}

export function create(state: MemoryState, input: NewTask): CreateOutcome {
  if (input.submissionKey !== null) {
    const key = keyOf(input.owner, input.submissionKey);
    if (state.keys.has(key)) {
      const taskId = state.keys.get(key) ?? null;
      return { created: false, task: existingForKey(state, taskId, input) };
    }
  }
  if (state.tasks.has(input.id)) {
    throw new TerminusError('invalid_argument', `task id ${input.id} already exists`);
  }
  if (input.maxLive !== undefined) {
    const live = countLive(state, input.owner);
    if (live >= input.maxLive) throw tooManyLive(input.maxLive, live);
  }
  const first = initialRecord(input);
  if (input.webhooks !== undefined && input.webhooks.length > 0) state.webhooks.set(input.id, copy(input.webhooks));
  const task = appendEvents(
    state,
    first,
    [{ kind: 'status', status: 'working', statusMessage: first.statusMessage }],
    input.now,
  );
  if (input.submissionKey !== null) state.keys.set(keyOf(input.owner, input.submissionKey), input.id);
  return { created: true, task };
}

/** Same key: same digest gives the task back (S5); a burned or spent key is refused (S6). */
function existingForKey(state: MemoryState, taskId: string | null, input: NewTask): TaskRecord {
  const task = taskId === null ? undefined : state.tasks.get(taskId);
  if (task === undefined || isExpired(task, input.now))
    throw keyBurned(input, taskId === null ? 'looked_up' : 'expired');
  if (task.requestDigest !== input.requestDigest) {
    throw new TerminusError('submission_key_conflict', 'submission key was used for a different request', {
      details: { submissionKey: input.submissionKey, taskId: task.id },
    });
  }
  return copy(task);
}

function keyBurned(input: NewTask, reason: 'looked_up' | 'expired'): TerminusError {
  return new TerminusError('submission_key_burned', `submission key is spent (${reason})`, {
    details: { submissionKey: input.submissionKey, reason },
  });
}

/**
 * `never_created` burns the key (S6). A key whose task has expired or been swept rejects
 * `not_found`: it was created, so "never created" would be a lie, and the task itself is gone (S7).
 */
export function lookupKey(state: MemoryState, owner: string, submissionKey: string, now: number): KeyLookup {
  const key = keyOf(owner, submissionKey);
  if (!state.keys.has(key)) {
    state.keys.set(key, null);
    state.burnedAt.set(key, now);
    return { kind: 'never_created' };
  }
  const taskId = state.keys.get(key) ?? null;
  if (taskId === null) return { kind: 'never_created' };
  const task = state.tasks.get(taskId);
  if (task === undefined || isExpired(task, now)) {
    throw taskNotFound();
  }
  return { kind: 'found', task: copy(task) };
}
