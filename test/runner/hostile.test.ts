import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/core/ports.js';
import { systemClock, systemIds } from '../../src/core/system.js';
import type { TaskRecord } from '../../src/core/task.js';
import { createEngine, type EngineOptions } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import type { LifecycleEvent } from '../../src/runner/observer.js';
import {
  defaultWorkerHeapMb,
  MAX_DEFAULT_WORKER_HEAP_MB,
  MIN_WORKER_HEAP_MB,
} from '../../src/runner/workers/limits.js';
import type { WorkersOptions } from '../../src/runner/workers/pool.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { readEffects, tools, type Effect } from './fixtures/worker-tools.js';

// Issue 30: hostile handlers cannot take the server down. A heap bomb of any shape ends only its
// worker, and its task fails naming the limit; a handler that ignores its aborted signal is killed
// after the grace period (in a worker) or given up (on the serving thread), so a cancel frees its
// slot and stop() returns; a flood of log lines is bounded on both sides of the worker boundary.
// Each case checks states, counts and reasons, never a time.

const OWNER = 'alice';
const MODULE = new URL('./fixtures/worker-tools.ts', import.meta.url);

interface Entry {
  readonly level: string;
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

let dir = '';
let store: TaskStore;
let entries: Entry[] = [];
let events: LifecycleEvent[] = [];
const engines: TaskEngine[] = [];

const logger: Logger = {
  debug: () => {},
  info: (message, fields = {}) => entries.push({ level: 'info', message, fields }),
  warn: (message, fields = {}) => entries.push({ level: 'warn', message, fields }),
  error: (message, fields = {}) => entries.push({ level: 'error', message, fields }),
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-hostile-'));
  store = await openSqliteTaskStore({ path: join(dir, 'tasks.db') });
  entries = [];
  events = [];
});

afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.stop()));
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function workers(extra: Partial<WorkersOptions> = {}): WorkersOptions {
  return { count: 2, module: MODULE, data: { dir }, heapMb: 128, output: () => {}, ...extra };
}

function start(options: Partial<EngineOptions> = {}): TaskEngine {
  const engine = createEngine({
    store,
    tools: tools({ dir }),
    clock: systemClock,
    ids: systemIds,
    logger,
    nodeId: 'node-a',
    leaseMs: 3000,
    heartbeatMs: 100,
    claimIntervalMs: 20,
    abortGraceMs: 300,
    observer: { observe: (event) => events.push(event) },
    ...options,
  });
  engine.start();
  engines.push(engine);
  return engine;
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 40_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function submit(engine: TaskEngine, tool: string, args: Record<string, unknown>): Promise<string> {
  const { task } = await engine.submit({ owner: OWNER, tool, args, wire: 'mcp-tasks-ext' });
  return task.id;
}

async function settled(id: string): Promise<TaskRecord> {
  return until(`${id} terminal`, async () => {
    const task = await store.get(OWNER, id, systemClock.now());
    return task !== null && ['completed', 'failed', 'cancelled'].includes(task.status) ? task : undefined;
  });
}

const effect = (id: string, kind: string, epoch = 1): Promise<Effect> =>
  until(`${kind} of ${id} at epoch ${epoch}`, () =>
    readEffects(dir).find((e) => e.taskId === id && e.kind === kind && e.epoch === epoch),
  );

const runEnded = (id: string) =>
  until(`the end of ${id}'s run`, () => {
    const found = events.find((e) => e.kind === 'run_ended' && e.taskId === id);
    return found?.kind === 'run_ended' ? found : undefined;
  });

describe('a heap bomb ends only its own worker', () => {
  // `json` (32 MB arrays) and `huge` (one 960 MB array) are single allocations past the 16 MB V8
  // grants a worker *thread* at its heap limit: with threads they aborted the whole process.
  it.each(['small', 'big', 'json', 'huge'] as const)(
    '%s: the task fails naming the heap limit, the other worker’s task goes on, the next task runs',
    async (how) => {
      // A memory limit far above the heap's: what ends these is the heap limit, not a /proc read.
      const engine = start({ workers: workers({ memoryMb: 2048 }) });
      const other = await submit(engine, 'hold', {});
      await effect(other, 'started');
      const id = await submit(engine, 'bomb', { how });
      const task = await settled(id);
      expect(task.status).toBe('failed');
      expect(task.error?.message).toMatch(
        /^the handler's worker process was ended: its JavaScript heap reached the worker limit of 128 MB \(workers\.heapMb, --worker-heap-mb\): V8 said "/,
      );
      expect(
        readEffects(dir)
          .filter((e) => e.taskId === id)
          .map((e) => e.epoch),
      ).toEqual([1]);
      expect(await engine.get(OWNER, other)).toMatchObject({ status: 'working', epoch: 1 });
      await engine.cancel(OWNER, other);
      expect(await effect(other, 'aborted')).toMatchObject({ abort: 'cancelled' });
      expect((await settled(await submit(engine, 'steps', { steps: 1 }))).status).toBe('completed');
    },
  );

  it.skipIf(process.platform !== 'linux')(
    'typed arrays, outside the JS heap: the memory limit kills the worker and the task fails naming it',
    async () => {
      const engine = start({ workers: workers({ memoryMb: 400 }) });
      const task = await settled(await submit(engine, 'bomb', { how: 'typed' }));
      expect(task.status).toBe('failed');
      expect(task.error?.message).toMatch(
        /^the handler's worker process was ended: its resident memory reached \d+ MB, over the worker limit of 400 MB \(workers\.memoryMb, --worker-memory-mb\)$/,
      );
      expect((await settled(await submit(engine, 'steps', { steps: 1 }))).status).toBe('completed');
    },
  );

  it('the default heap is sized to the machine: a quarter of its memory shared by the workers, 256 to 2048 MB', () => {
    const gb = 1024 ** 3;
    expect(defaultWorkerHeapMb(2, 24 * gb)).toBe(MAX_DEFAULT_WORKER_HEAP_MB);
    expect(defaultWorkerHeapMb(2, 4 * gb)).toBe(512);
    expect(defaultWorkerHeapMb(4, 4 * gb)).toBe(MIN_WORKER_HEAP_MB);
    expect(defaultWorkerHeapMb(1, 6 * gb)).toBe(1536);
    expect(() => start({ workers: workers({ heapMb: 8 }) })).toThrow(
      'workers.heapMb must be an integer of at least 16, got 8',
    );
  });
});

describe('a handler that ignores its aborted signal', () => {
  it('in a worker, after a cancel: killed after the grace, the task stays cancelled, and its slot runs the next task', async () => {
    const engine = start({ workers: workers({ count: 1 }) });
    const id = await submit(engine, 'stubborn', { how: 'spin' });
    await effect(id, 'started');
    expect((await engine.cancel(OWNER, id)).outcome).toBe('cancelled');
    const next = await submit(engine, 'steps', { steps: 1 });
    expect((await settled(next)).status).toBe('completed');
    expect(await runEnded(id)).toMatchObject({ outcome: 'cancelled' });
    const said = entries.find((e) => e.message === 'the handler worker ended after its cancel');
    expect(said?.fields['reason']).toBe('the handler ignored its aborted signal (cancelled) for 300 ms (abortGraceMs)');
    expect((await store.get(OWNER, id, systemClock.now()))?.status).toBe('cancelled');
    expect(readEffects(dir).some((e) => e.taskId === id && e.kind === 'returned')).toBe(false);
  });

  it('in a worker, at stop(): killed after the grace, stop() returns, the task is released for a re-run', async () => {
    const engine = start({ workers: workers({ count: 1 }) });
    const id = await submit(engine, 'stubborn', { how: 'spin' });
    await effect(id, 'started');
    await engine.stop();
    expect(await runEnded(id)).toMatchObject({ outcome: 'shutdown' });
    expect(await store.get(OWNER, id, systemClock.now())).toMatchObject({
      status: 'working',
      leaseOwner: null,
      epoch: 1,
    });
  });

  it('on the serving thread, after a cancel: given up after the grace; its slot runs the next task', async () => {
    const engine = start({ concurrency: 1 });
    const id = await submit(engine, 'stubborn', { how: 'hang' });
    await effect(id, 'started');
    await engine.cancel(OWNER, id);
    expect((await settled(await submit(engine, 'steps', { steps: 1 }))).status).toBe('completed');
    expect(await runEnded(id)).toMatchObject({ outcome: 'abandoned' });
    const said = entries.find((e) => e.message.startsWith('giving up on a handler that ignores its aborted signal'));
    expect(said?.fields).toMatchObject({ taskId: id, abort: 'cancelled' });
  });

  it('on the serving thread, at stop(): stop() returns after the grace; the lease is left to lapse, not released', async () => {
    const engine = start();
    const id = await submit(engine, 'stubborn', { how: 'hang' });
    await effect(id, 'started');
    await engine.stop();
    expect(await runEnded(id)).toMatchObject({ outcome: 'abandoned' });
    // The handler may still write: the lease stays this node's until it lapses (leaseMs), then the
    // task is claimed again as after a crash.
    const task = await store.get(OWNER, id, systemClock.now());
    expect(task).toMatchObject({ status: 'working', leaseOwner: 'node-a', epoch: 1 });
  });
});

describe('a log flood in a worker', () => {
  it('200,000 un-awaited lines and logger lines: the worker sends at most the bound, the rest is counted', async () => {
    const engine = start({ workers: workers({ count: 1 }) });
    const id = await submit(engine, 'flood', { lines: 200_000 });
    expect((await settled(id)).status).toBe('completed');
    const page = await engine.readLog(OWNER, id, { after: 0, limit: 1 });
    expect(page).toMatchObject({ lastSeq: 200_000, dropped: 190_000 });
    expect(page.lines[0]).toMatchObject({ seq: 190_001, text: 'line 190001' });
    const dropped = events.flatMap((e) => (e.kind === 'log_dropped' && e.taskId === id ? [e.count] : []));
    expect(dropped.reduce((a, b) => a + b, 0)).toBe(189_999);
    const logger = entries.find((e) => e.message.startsWith('handler logger lines dropped'));
    expect(logger?.fields).toMatchObject({ taskId: id });
    expect(Number(logger?.fields['dropped'])).toBeGreaterThan(190_000);
  }, 60_000);
});
