/**
 * The adaptive poll interval (issue 32): a working task suggests a quarter of the time its tool's
 * runs are still expected to take (or, past that, of the time since), between the tool's own
 * `pollIntervalMs` (the floor) and the engine's cap. Measured with a clock the test moves, so every
 * figure is computed, not timed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/ports.js';
import { systemClock } from '../../src/core/system.js';
import type { TaskRecord } from '../../src/core/task.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { DurationEstimates, suggestPollInterval } from '../../src/runner/poll-interval.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { engineFor, gate, OWNER, text, tool, type Gate } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'terminus-poll-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const engines: TaskEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
});

/** Real time plus an offset the test moves forward. */
function movedClock(): Clock & { move(ms: number): void } {
  let offset = 0;
  return {
    now: () => systemClock.now() + offset,
    sleep: (ms, signal) => systemClock.sleep(ms, signal),
    move: (ms) => (offset += ms),
  };
}

const task = (over: Partial<TaskRecord>): TaskRecord =>
  ({ status: 'working', createdAt: 0, pollIntervalMs: 200, tool: 't', ...over }) as TaskRecord;

describe('suggestPollInterval', () => {
  it('starts at the floor, grows with age when nothing is known, and stops at the cap', () => {
    expect(suggestPollInterval(task({}), 0, null, 30_000)).toBe(200);
    expect(suggestPollInterval(task({}), 40_000, null, 30_000)).toBe(10_000);
    expect(suggestPollInterval(task({}), 1_000_000, null, 30_000)).toBe(30_000);
  });

  it('follows the expected end: long at first for long work, short near the end, backing off past it', () => {
    expect(suggestPollInterval(task({}), 0, 60_000, 30_000)).toBe(15_000);
    expect(suggestPollInterval(task({}), 59_500, 60_000, 30_000)).toBe(200);
    expect(suggestPollInterval(task({}), 64_000, 60_000, 30_000)).toBe(1_000);
  });

  it("keeps a tool author's pollIntervalMs as the floor, and a terminal task's interval unchanged", () => {
    expect(suggestPollInterval(task({ pollIntervalMs: 5_000 }), 4_000, null, 30_000)).toBe(5_000);
    expect(suggestPollInterval(task({ pollIntervalMs: 50_000 }), 400_000, null, 30_000)).toBe(50_000);
    expect(suggestPollInterval(task({ status: 'completed' }), 400_000, null, 30_000)).toBe(200);
  });

  it('a cap of 0 (terminus serve --max-poll-interval-ms 0) fixes every suggestion at the floor', () => {
    for (const [at, estimate] of [
      [0, null],
      [40_000, null],
      [0, 60_000],
      [64_000, 60_000],
    ] as const) {
      expect(suggestPollInterval(task({}), at, estimate, 0)).toBe(200);
    }
  });

  it('estimates a tool from its completed and failed runs only', () => {
    const estimates = new DurationEstimates();
    expect(estimates.estimate('t')).toBeNull();
    estimates.observe('t', 10_000, 'crashed');
    expect(estimates.estimate('t')).toBeNull();
    estimates.observe('t', 10_000, 'completed');
    expect(estimates.estimate('t')).toBeCloseTo(10_000, 6);
    estimates.observe('t', 1_000, 'failed');
    const after = estimates.estimate('t')!;
    expect(after).toBeLessThan(10_000);
    expect(after).toBeGreaterThan(1_000);
  });
});

describe('engine: the interval every wire reads adapts to the tool and the task', () => {
  it('a long tool suggests longer intervals once its runs are known; a quick one stays at its floor', async () => {
    const clock = movedClock();
    const store = await openSqliteTaskStore({ path: join(dir, 'poll.db') });
    let open: Gate = gate();
    let started: Gate = gate();
    const long = tool(
      'long',
      async () => {
        started.open();
        await open.promise;
        return text('done');
      },
      { pollIntervalMs: 250 },
    );
    const quick = tool('quick', async () => text('ok'), { pollIntervalMs: 250 });
    const engine = engineFor(store, [long, quick], { clock, leaseMs: 600_000, heartbeatMs: 100 });
    engines.push(engine);
    engine.start();

    // Nothing known yet: the floor at creation, a quarter of the age later.
    const first = (await engine.submit({ owner: OWNER, tool: 'long', args: {}, wire: 'mcp-tasks-ext' })).task;
    expect(first.pollIntervalMs).toBe(250);
    await started.promise;
    clock.move(40_000);
    const later = await engine.get(OWNER, first.id);
    expect(later.pollIntervalMs).toBeGreaterThanOrEqual(10_000);
    expect(later.pollIntervalMs).toBeLessThan(10_500);
    // Its run takes ~40 s by the clock; it ends, and shows its floor again.
    open.open();
    const done = await engine.waitForChange(OWNER, first.id, { sinceUpdatedAt: first.updatedAt, timeoutMs: 5_000 });
    expect(done.status).toBe('completed');
    expect(done.pollIntervalMs).toBe(250);

    // The next task of the same tool starts at a quarter of its expected ~40 s.
    open = gate();
    started = gate();
    const second = (await engine.submit({ owner: OWNER, tool: 'long', args: { n: 2 }, wire: 'mcp-tasks-ext' })).task;
    expect(second.pollIntervalMs).toBeGreaterThan(9_000);
    expect(second.pollIntervalMs).toBeLessThan(10_500);
    open.open();

    // A quick tool stays at its floor.
    const q = (await engine.submit({ owner: OWNER, tool: 'quick', args: {}, wire: 'mcp-tasks-ext' })).task;
    await engine.waitForChange(OWNER, q.id, { sinceUpdatedAt: q.updatedAt, timeoutMs: 5_000 });
    const q2 = (await engine.submit({ owner: OWNER, tool: 'quick', args: { n: 2 }, wire: 'mcp-tasks-ext' })).task;
    expect(q2.pollIntervalMs).toBe(250);
    await store.close();
  });
});
