import { leaseLost, TerminusError } from '../../core/errors.js';
import type { LogLine } from '../../core/log.js';
import { isExpired, isTerminal, type TaskRecord } from '../../core/task.js';
import type { AppendBound, Fence } from '../port.js';
import { DEFAULT_EVENT_BOUND, type NewOrderedEvent } from '../../core/task-events.js';
import type { Delivery, DeliveryAttempt, WebhookEndpoint } from '../../core/webhook.js';

/** One task's log in memory: the kept lines (oldest first) and the counters the bound keeps. */
export interface MemoryLog {
  lastSeq: number;
  dropped: number;
  bytes: number;
  readonly lines: { readonly line: LogLine; readonly bytes: number }[];
}

/** One stored event: the log line of a `log` event stays in the log (`MemoryState.logs`). */
export type MemoryEvent = { readonly seq: number; readonly at: number } & NewOrderedEvent;

/**
 * The memory store's tables. Records are kept as private copies: everything going in or out passes
 * through `copy`, a JSON round trip, so a caller mutating what it got back (or what it passed in)
 * cannot change the store, and values behave exactly as they do after a SQLite JSON column.
 */
export interface MemoryState {
  readonly tasks: Map<string, TaskRecord>;
  /** `owner \u0000 key` -> the task id that used it, or null when `lookupKey` burned it (S6). */
  readonly keys: Map<string, string | null>;
  /** When each tombstone (a `null` key) was burned, for `sweepTombstones`. */
  readonly burnedAt: Map<string, number>;
  /** Task id -> its log; deleted with the task. */
  readonly logs: Map<string, MemoryLog>;
  /** Task id -> its ordered events, oldest first; deleted with the task. */
  readonly events: Map<string, MemoryEvent[]>;
  /** How many progress and log events each task keeps (`createMemoryTaskStore`'s `eventBound`). */
  readonly eventBound: AppendBound;
  /** Task id -> the endpoints it was created with; deleted with the task. */
  readonly webhooks: Map<string, readonly WebhookEndpoint[]>;
  /** The webhook outbox by `task \0 seq \0 endpoint`; rows outlive their task. */
  readonly outbox: Map<
    string,
    {
      delivery: Delivery;
      leaseOwner: string | null;
      leaseExpiresAt: number | null;
      readonly attemptLog: DeliveryAttempt[];
    }
  >;
  closed: boolean;
}

export function createState(eventBound: AppendBound = DEFAULT_EVENT_BOUND): MemoryState {
  return {
    tasks: new Map(),
    keys: new Map(),
    burnedAt: new Map(),
    logs: new Map(),
    events: new Map(),
    eventBound,
    webhooks: new Map(),
    outbox: new Map(),
    closed: false,
  };
}

export function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export function keyOf(owner: string, submissionKey: string): string {
  return `${owner}\u0000${submissionKey}`;
}

export function assertOpen(state: MemoryState): void {
  if (state.closed) throw new TerminusError('unavailable', 'task store is closed');
}

/** The stored record if `owner` may see it at `now` (S7, S8); the stored object, not a copy. */
export function visible(state: MemoryState, owner: string, id: string, now: number): TaskRecord | null {
  const task = state.tasks.get(id);
  if (task === undefined || task.owner !== owner || isExpired(task, now)) return null;
  return task;
}

/** The stored record if the fence still holds, else `lease_lost` (S3). */
export function fenced(state: MemoryState, fence: Fence): TaskRecord {
  const task = state.tasks.get(fence.taskId);
  if (task === undefined || task.leaseOwner !== fence.workerId || task.epoch !== fence.epoch) {
    throw leaseLost(fence.taskId, fence.epoch);
  }
  return task;
}

/** Progress, checkpoints and input requests never touch a terminal task (S2). */
export function assertLive(task: TaskRecord): void {
  if (isTerminal(task.status)) {
    throw new TerminusError('already_terminal', `task ${task.id} is ${task.status}`, {
      details: { taskId: task.id, status: task.status },
    });
  }
}

export function put(state: MemoryState, task: TaskRecord): TaskRecord {
  state.tasks.set(task.id, copy(task));
  return copy(task);
}
