/**
 * The status stream of one operation: every subscriber gets the current status first, then each
 * change, and the stream ends when the operation settles, stops waiting locally, or stops.
 */
import type { Clock } from '../core/ports.js';
import type { OperationStatus } from './executor-types.js';
import type { ToolOperation } from './operation.js';

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

  async *subscribe(): AsyncGenerator<OperationStatus> {
    const buffer: (OperationStatus | null)[] = [this.current];
    if (this.ended) buffer.push(null);
    let wake: (() => void) | null = null;
    const subscriber = (status: OperationStatus | null): void => {
      buffer.push(status);
      wake?.();
    };
    if (!this.ended) this.subscribers.add(subscriber);
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
      this.subscribers.delete(subscriber);
    }
  }
}

function toStatus(record: ToolOperation, at: number, waitingStopped: boolean): OperationStatus {
  return {
    operationId: record.id,
    callNodeId: record.callNodeId,
    state: record.state,
    serverStatus: record.lastServerStatus,
    taskId: record.taskId,
    at,
    waitingStopped,
  };
}
