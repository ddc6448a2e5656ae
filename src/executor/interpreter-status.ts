/**
 * The status stream of one operation: every subscriber gets the current status first, then each
 * change, and the stream ends when the operation settles, stops waiting locally, or stops. A change
 * is any field but `at`: the state, the server status, what the executor is doing (`activity`), the
 * cancel's progress and the server's progress (issue 11, defect 6: nothing changes silently).
 */
import type { Clock } from '../core/ports.js';
import type { OperationActivity, OperationStatus } from './executor-types.js';
import type { ToolOperation } from './operation.js';
import { drivesDetached } from './step.js';
import { isSettled } from './transitions.js';

export class StatusFeed {
  private current: OperationStatus;
  private ended = false;
  private readonly subscribers = new Set<(status: OperationStatus | null) => void>();
  private readonly clock: Clock;

  constructor(record: ToolOperation, clock: Clock) {
    this.clock = clock;
    this.current = toStatus(record, clock.now(), record.waitingStoppedAt !== null);
  }

  push(record: ToolOperation, waitingStopped: boolean): void {
    if (this.ended) return;
    this.current = toStatus(record, this.clock.now(), waitingStopped || record.waitingStoppedAt !== null);
    for (const subscriber of this.subscribers) subscriber(this.current);
  }

  /** Pushes the record's status only if it differs from the last one in more than its time. */
  refresh(record: ToolOperation): void {
    if (this.ended) return;
    const next = toStatus(record, this.clock.now(), record.waitingStoppedAt !== null);
    if (sameStatus(next, this.current)) return;
    this.current = next;
    for (const subscriber of this.subscribers) subscriber(this.current);
  }

  /** Starts a new stream after a re-attach (resume after detach); earlier subscribers stay ended. */
  reopen(record: ToolOperation): void {
    if (!this.ended) return;
    this.ended = false;
    this.current = toStatus(record, this.clock.now(), false);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const subscriber of this.subscribers) subscriber(null);
    this.subscribers.clear();
  }

  /**
   * `until` ends this one subscription (a waiter whose own budget ran out, C11): its last status is
   * the current one marked `waitingStopped`, and the feed goes on for the others.
   */
  async *subscribe(until?: AbortSignal): AsyncGenerator<OperationStatus> {
    const buffer: (OperationStatus | null)[] = [this.current];
    if (this.ended) buffer.push(null);
    let wake: (() => void) | null = null;
    const subscriber = (status: OperationStatus | null): void => {
      buffer.push(status);
      wake?.();
    };
    const onStop = (): void => {
      this.subscribers.delete(subscriber);
      subscriber({ ...this.current, at: this.clock.now(), waitingStopped: true });
      subscriber(null);
    };
    if (!this.ended) {
      this.subscribers.add(subscriber);
      if (until?.aborted === true) onStop();
      else until?.addEventListener('abort', onStop, { once: true });
    }
    try {
      for (;;) {
        const item = buffer.shift();
        if (item === null) return;
        if (item !== undefined) {
          yield item;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    } finally {
      until?.removeEventListener('abort', onStop);
      this.subscribers.delete(subscriber);
    }
  }
}

function sameStatus(a: OperationStatus, b: OperationStatus): boolean {
  return JSON.stringify({ ...a, at: 0 }) === JSON.stringify({ ...b, at: 0 });
}

/** The status a record shows; also what a settled operation's handle yields. */
export function toStatus(record: ToolOperation, at: number, waitingStopped: boolean): OperationStatus {
  const activity = activityOf(record, at);
  const cancel = cancelOf(record);
  const progress = record.progress ?? null;
  return {
    operationId: record.id,
    callNodeId: record.callNodeId,
    state: record.state,
    serverStatus: record.lastServerStatus,
    taskId: record.taskId,
    at,
    waitingStopped,
    ...(activity === undefined ? {} : { activity }),
    ...(cancel === undefined ? {} : { cancel }),
    ...(progress === null ? {} : { progress }),
  };
}

/** States in which a timer reads the server's status on its cadence. */
const POLLING = new Set(['WORKING', 'CANCEL_REQUESTED']);

function activityOf(record: ToolOperation, now: number): OperationActivity | undefined {
  if (isSettled(record.state)) return undefined;
  if (record.waitingStoppedAt !== null && !drivesDetached(record, now)) return undefined;
  const failure = record.lastFailure ?? null;
  if (failure !== null && record.wakeAt !== null) {
    return {
      kind: retryKind(failure.code),
      retryAt: Math.max(record.wakeAt, record.notBefore ?? 0),
      attempt: failure.attempt,
      reason: failure.reason,
    };
  }
  return POLLING.has(record.state) ? { kind: 'polling' } : undefined;
}

function retryKind(code: string): 'unreachable' | 'throttled' | 'retrying' {
  if (code === '429' || code === '503') return 'throttled';
  if (code === 'network' || code === 'timeout' || code === 'lost') return 'unreachable';
  return 'retrying';
}

function cancelOf(record: ToolOperation): OperationStatus['cancel'] {
  if (record.cancelGeneration === 0) return undefined;
  if (record.state !== 'CANCEL_REQUESTED' && record.state !== 'UNKNOWN') return 'confirmed';
  return record.cancelAckedGeneration >= record.cancelGeneration ? 'delivered' : 'requested';
}
