import type { Clock, Logger } from '../core/ports.js';
import type { TaskStore } from '../store/port.js';
import type { TaskObserver } from './observer.js';
import { errorFields } from './logger.js';

/** Rows deleted per store call; a full batch is followed by another at once. */
const SWEEP_BATCH = 500;

/**
 * Deletes expired tasks every `intervalMs` until `stop` (S7: the store never deletes a working
 * task, so the sweep needs no care of its own), then the submission-key tombstones older than
 * `keyRetentionMs` (S6 holds for that long). Never rejects.
 */
export async function runSweeper(
  settings: {
    readonly store: TaskStore;
    readonly clock: Clock;
    readonly logger: Logger;
    readonly keyRetentionMs: number;
    readonly observer?: TaskObserver;
  },
  intervalMs: number,
  stop: AbortSignal,
): Promise<void> {
  const { store, clock, logger } = settings;
  while (!stop.aborted) {
    try {
      await clock.sleep(intervalMs, stop);
    } catch {
      return;
    }
    try {
      let swept = SWEEP_BATCH;
      while (swept === SWEEP_BATCH && !stop.aborted) {
        swept = await store.sweepExpired(clock.now(), SWEEP_BATCH);
        if (swept > 0) logger.debug('swept expired tasks', { swept });
        if (swept > 0) settings.observer?.observe({ kind: 'expired', at: clock.now(), count: swept });
      }
      swept = SWEEP_BATCH;
      while (swept === SWEEP_BATCH && !stop.aborted) {
        swept = await store.sweepTombstones(clock.now() - settings.keyRetentionMs, SWEEP_BATCH);
        if (swept > 0) logger.debug('swept submission-key tombstones', { swept });
      }
    } catch (error) {
      logger.warn('TTL sweep failed', errorFields(error));
    }
  }
}
