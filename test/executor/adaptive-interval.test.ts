/**
 * C6 against the server's adaptive poll interval (issue 32): whatever interval the server suggests
 * as a task ages (from its floor up to its 30 s cap), our executor's next poll stays within its own
 * floor and ceiling, and a cancel is still confirmed on the executor's short cadence.
 */
import { describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../src/core/task.js';
import { effectiveInterval, nextCancelPoll, nextPoll } from '../../src/executor/schedule.js';
import { DEFAULT_MAX_POLL_INTERVAL_MS, suggestPollInterval } from '../../src/runner/poll-interval.js';
import { fresh, T0 } from './fixtures.js';

const task = { status: 'working', createdAt: 0, pollIntervalMs: 50, tool: 't' } as TaskRecord;

describe('C6 with an adapting server interval', () => {
  it('never polls sooner than the executor floor nor later than its ceiling, as the hint grows', () => {
    const record = fresh();
    const { minPollIntervalMs, maxPollIntervalMs } = record.policy;
    for (const estimate of [null, 2_000, 600_000]) {
      for (let age = 0; age <= 3_600_000; age += 7_919) {
        const hint = suggestPollInterval(task, age, estimate, DEFAULT_MAX_POLL_INTERVAL_MS);
        const polled = { ...record, pollIntervalMs: hint };
        const interval = effectiveInterval(polled);
        expect(interval).toBeGreaterThanOrEqual(minPollIntervalMs);
        expect(interval).toBeLessThanOrEqual(maxPollIntervalMs);
        const next = nextPoll(polled, T0, 0.999);
        expect(next.atMs - T0).toBeGreaterThanOrEqual(minPollIntervalMs);
        // A cancel's confirmation keeps the executor's 1 s cadence however long the hint grew.
        expect(nextCancelPoll(polled, T0, 0).atMs - T0).toBeLessThanOrEqual(Math.max(1_000, minPollIntervalMs));
      }
    }
  });
});
