import {
  expiresAt,
  isTerminal,
  type InputRequest,
  type LateOutcome,
  type Progress,
  type TaskRecord,
} from '../../core/task.js';
import type { ClaimedTask, ClaimRequest, Fence, FinishInput, FinishOutcome } from '../port.js';
import { statusChange } from '../../core/task-events.js';
import { appendEvents } from './events.js';
import { assertLive, copy, fenced, put, type MemoryState } from './state.js';

/** Oldest first; a claim bumps the epoch, which fences out every earlier holder (S3). */
export function claim(state: MemoryState, request: ClaimRequest): ClaimedTask[] {
  if (request.limit < 1 || request.tools.length === 0) return [];
  const runnable = [...state.tasks.values()]
    .filter((t) => !isTerminal(t.status) && request.tools.includes(t.tool))
    .filter((t) => t.leaseExpiresAt === null || t.leaseExpiresAt <= request.now)
    .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
    .slice(0, Math.floor(request.limit));
  return runnable.map((t) => ({
    ...put(state, {
      ...t,
      leaseOwner: request.workerId,
      leaseExpiresAt: request.now + request.leaseMs,
      epoch: t.epoch + 1,
    }),
    previousLeaseOwner: t.leaseOwner,
  }));
}

/** Lease bookkeeping does not touch `updatedAt`: clients waiting for a change must not wake for it. */
export function heartbeat(state: MemoryState, fence: Fence, leaseMs: number, now: number): TaskRecord {
  const task = fenced(state, fence);
  return put(state, { ...task, leaseExpiresAt: now + leaseMs });
}

export function progress(state: MemoryState, fence: Fence, value: Progress, now: number): void {
  const task = fenced(state, fence);
  assertLive(task);
  const statusMessage = value.message ?? task.statusMessage;
  appendEvents(
    state,
    { ...task, progress: copy(value), statusMessage, updatedAt: now },
    [{ kind: 'progress', progress: value }],
    now,
  );
}

export function checkpoint(state: MemoryState, fence: Fence, data: unknown, now: number): void {
  const task = fenced(state, fence);
  assertLive(task);
  put(state, { ...task, checkpoint: data === undefined ? null : copy(data), updatedAt: now });
}

/** A key asked before (outstanding or answered) is not asked again. */
export function requestInput(
  state: MemoryState,
  fence: Fence,
  key: string,
  request: InputRequest,
  now: number,
): TaskRecord {
  const task = fenced(state, fence);
  assertLive(task);
  if (Object.hasOwn(task.inputRequests, key) || Object.hasOwn(task.inputResponses, key)) return copy(task);
  const inputRequests = { ...task.inputRequests, [key]: copy(request) };
  const asked = { ...task, inputRequests, status: 'input_required' as const, updatedAt: now };
  const events = [{ kind: 'input_requested', key, request } as const, ...statusChange(task.status, asked)];
  return appendEvents(state, asked, events, now);
}

/** Records the outcome, or keeps it as `lateOutcome` when a cancel won first (S2, S4). */
export function finish(state: MemoryState, fence: Fence, outcome: FinishInput, now: number): FinishOutcome {
  const task = fenced(state, fence);
  const released = { ...task, leaseOwner: null, leaseExpiresAt: null };
  if (isTerminal(task.status)) {
    const late: LateOutcome =
      outcome.status === 'completed'
        ? { epoch: fence.epoch, at: now, result: outcome.result }
        : { epoch: fence.epoch, at: now, error: outcome.error };
    return { outcome: 'late', task: put(state, { ...released, lateOutcome: late }), late: copy(late) };
  }
  const terminal: TaskRecord =
    outcome.status === 'completed'
      ? { ...released, status: 'completed', result: outcome.result, resultDigest: outcome.resultDigest }
      : {
          ...released,
          status: 'failed',
          error: outcome.error,
          statusMessage: outcome.statusMessage ?? task.statusMessage,
        };
  const done = { ...terminal, inputRequests: {}, terminalAt: now, updatedAt: now };
  return { outcome: 'recorded', task: appendEvents(state, done, statusChange(task.status, done), now) };
}

export function release(state: MemoryState, fence: Fence): void {
  const task = fenced(state, fence);
  put(state, { ...task, leaseOwner: null, leaseExpiresAt: null });
}

/** Only terminal tasks have an expiry at all (`expiresAt`), so a working task is never swept (S7). */
export function sweepExpired(state: MemoryState, now: number, limit: number): number {
  const due = [...state.tasks.values()]
    .map((task) => ({ task, at: expiresAt(task) }))
    .filter((e): e is { task: TaskRecord; at: number } => e.at !== null && now >= e.at && isTerminal(e.task.status))
    .sort((a, b) => a.at - b.at)
    .slice(0, Math.max(0, Math.floor(limit)));
  for (const { task } of due) {
    state.tasks.delete(task.id);
    state.logs.delete(task.id);
    state.events.delete(task.id);
    state.webhooks.delete(task.id);
  }
  return due.length;
}

export function sweepTombstones(state: MemoryState, before: number, limit: number): number {
  let swept = 0;
  for (const [key, at] of state.burnedAt) {
    if (swept >= limit) break;
    if (at > before || state.keys.get(key) !== null) continue;
    state.keys.delete(key);
    state.burnedAt.delete(key);
    swept++;
  }
  return swept;
}

export function countLive(state: MemoryState, owner: string): number {
  let live = 0;
  for (const task of state.tasks.values()) if (task.owner === owner && !isTerminal(task.status)) live++;
  return live;
}
