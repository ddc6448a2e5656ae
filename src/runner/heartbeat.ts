import { isTerminusError } from '../core/errors.js';
import type { Clock, Logger } from '../core/ports.js';
import type { TaskRecord } from '../core/task.js';
import type { Fence, TaskStore } from '../store/port.js';
import { errorFields } from './logger.js';

export interface HeartbeatLoop {
  readonly store: TaskStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly fence: Fence;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** Ends the loop (the run is over); an in-flight heartbeat is awaited, not abandoned. */
  readonly stop: AbortSignal;
  /** The task as stored after each heartbeat: a cancel and input replies are seen here. */
  onRecord(record: TaskRecord): void;
  onLeaseLost(error: unknown): void;
}

/**
 * Extends the lease every `heartbeatMs` until `stop`. `lease_lost` ends the loop; other errors
 * (store unavailable) are logged and retried at the next beat: the lease has `leaseMs -
 * heartbeatMs` of slack, and if it runs out the store's fence rejects every later write anyway.
 */
export async function runHeartbeat(loop: HeartbeatLoop): Promise<void> {
  const { store, clock, fence, stop } = loop;
  while (!stop.aborted) {
    try {
      await clock.sleep(loop.heartbeatMs, stop);
    } catch {
      return;
    }
    if (stop.aborted) return;
    try {
      loop.onRecord(await store.heartbeat(fence, loop.leaseMs, clock.now()));
    } catch (error) {
      if (isTerminusError(error, 'lease_lost')) {
        loop.onLeaseLost(error);
        return;
      }
      loop.logger.warn('heartbeat failed', errorFields(error));
    }
  }
}
