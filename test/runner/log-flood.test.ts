import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import type { LifecycleEvent } from '../../src/runner/observer.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { LOG_APPEND_CHUNK } from '../../src/runner/task-log.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import {
  adminPool,
  dropSchema,
  failWithoutDatabase,
  freshSchema,
  openStore,
  PG_URL,
} from '../store/postgres-fixture.js';
import { aborted, engineFor, gate, OWNER, text, tool, until } from './helpers.js';

// Issue 30: a handler that floods its task log without awaiting (`void ctx.log(...)` in a loop)
// must not stall the serving thread, grow memory with every line, or take the process down when
// its lines outlive the run. What is checked is structure: how many lines wait, how many each
// store write takes, what the log says was dropped; never a time.

const FLOOD = 200_000;

/** The task once completed: a flood on a loaded machine's PostgreSQL takes longer than helpers' 10 s. */
function completed(store: TaskStore, id: string): Promise<unknown> {
  const done = async () => (await store.get(OWNER, id, systemClock.now()))?.status === 'completed';
  return until(done, `${id} completed`, 50_000);
}
const LIMITS = { maxLines: 10_000, maxBytes: 4 * 1024 * 1024, maxLineBytes: 8 * 1024 };
/**
 * The flood's own loop holds this thread for about a second on a loaded machine: with the helpers'
 * 300 ms lease the task would be claimed again meanwhile (a second run, another 200,000 lines).
 */
const LEASE = { leaseMs: 30_000, heartbeatMs: 1_000 };

/** The store with every `appendLog` recorded: its line count and its `skipped`. */
function recorded(inner: TaskStore): { store: TaskStore; appends: { lines: number; skipped: number }[] } {
  const appends: { lines: number; skipped: number }[] = [];
  const store: TaskStore = {
    ...inner,
    appendLog: (fence, lines, bound, now, skipped) => {
      appends.push({ lines: lines.length, skipped: skipped ?? 0 });
      return inner.appendLog(fence, lines, bound, now, skipped);
    },
  };
  return { store, appends };
}

const pool = PG_URL === '' ? null : adminPool();
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) if (pool !== null) await dropSchema(pool, schema);
  await pool?.end();
});

const BACKENDS: readonly { name: string; open: () => Promise<TaskStore> }[] = [
  { name: 'memory', open: async () => createMemoryTaskStore() },
  { name: 'sqlite', open: () => openSqliteTaskStore({ path: ':memory:' }) },
  {
    name: 'postgres',
    open: () => {
      const schema = freshSchema('flood');
      schemas.push(schema);
      return openStore(schema);
    },
  },
];

if (PG_URL === '') failWithoutDatabase();

describe.each(BACKENDS.filter((b) => b.name !== 'postgres' || PG_URL !== ''))('a log flood on $name', ({ open }) => {
  let engine: TaskEngine | undefined;
  let store: TaskStore | undefined;
  afterEach(async () => {
    await engine?.stop();
    await store?.close();
    engine = undefined;
  });

  test('200,000 un-awaited ctx.log lines: at most the bound waits, writes are chunked, the rest is counted as dropped', async () => {
    store = await open();
    const { store: watched, appends } = recorded(store);
    const events: LifecycleEvent[] = [];
    const flood = tool('flood', async (_args, ctx) => {
      for (let i = 1; i <= FLOOD; i++) void ctx.log(`line ${i}`, { i });
      await ctx.log('last');
      return text('flooded');
    });
    engine = engineFor(watched, [flood], {
      ...LEASE,
      logLimits: LIMITS,
      observer: { observe: (e) => events.push(e) },
    });
    engine.start();
    const { task } = await engine.submit({ owner: OWNER, tool: 'flood', args: {}, wire: 'mcp-tasks-ext' });
    await completed(store, task.id);

    // Never more than the bound crossed to the store, in writes of at most a chunk each.
    const written = appends.reduce((sum, a) => sum + a.lines, 0);
    expect(Math.max(...appends.map((a) => a.lines))).toBeLessThanOrEqual(LOG_APPEND_CHUNK);
    expect(written).toBeLessThanOrEqual(2 * LIMITS.maxLines + 1);
    expect(appends.length).toBeLessThanOrEqual(Math.ceil(written / LOG_APPEND_CHUNK) + 4);
    // Every line has its seq; the dropped ones are counted, in the log and as an event.
    const page = await engine.readLog(OWNER, task.id, { after: 0, limit: 1000 });
    expect(page).toMatchObject({ next: expect.any(Number) as number, done: false });
    const last = await engine.readLog(OWNER, task.id, { after: FLOOD - 5, limit: 1000 });
    expect(last.lines.map((l) => l.text)).toEqual([
      'line 199996',
      'line 199997',
      'line 199998',
      'line 199999',
      'line 200000',
      'last',
    ]);
    expect(last.lines.at(-1)?.seq).toBe(FLOOD + 1);
    expect(last.dropped).toBe(FLOOD + 1 - LIMITS.maxLines);
    expect(page.lines[0]?.seq).toBe(FLOOD + 1 - LIMITS.maxLines + 1);
    const skipped = appends.reduce((sum, a) => sum + a.skipped, 0);
    const counted = events.flatMap((e) => (e.kind === 'log_dropped' ? [e.count] : []));
    expect(counted.reduce((a, b) => a + b, 0)).toBe(skipped);
    expect(skipped).toBeGreaterThan(0);
  }, 60_000);

  test('a handler that returns without awaiting its lines: they are stored before its outcome, and nothing is left to reject', async () => {
    store = await open();
    const quick = tool('quick', async (_args, ctx) => {
      for (let i = 1; i <= 3_000; i++) void ctx.log(`line ${i}`);
      return text('returned');
    });
    engine = engineFor(store, [quick], { ...LEASE, logLimits: LIMITS });
    engine.start();
    const { task } = await engine.submit({ owner: OWNER, tool: 'quick', args: {}, wire: 'mcp-tasks-ext' });
    await completed(store, task.id);
    const page = await engine.readLog(OWNER, task.id, { after: 2_995, limit: 10 });
    expect(page.lines.map((l) => l.text)).toEqual(['line 2996', 'line 2997', 'line 2998', 'line 2999', 'line 3000']);
    expect(page).toMatchObject({ lastSeq: 3_000, dropped: 0, done: true });
  }, 60_000);
});

describe('a handler that ignores what its context calls return', () => {
  let engine: TaskEngine | undefined;
  afterEach(async () => {
    await engine?.stop();
    engine = undefined;
  });

  test('un-awaited log, progress and checkpoint calls refused after a cancel make no unhandled rejection', async () => {
    const store = createMemoryTaskStore();
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => void rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    const done = gate();
    const careless = tool('careless', async (_args, ctx) => {
      await aborted(ctx.signal);
      // Each of these is refused (the task is cancelled); none is awaited.
      void ctx.log('after the cancel');
      void ctx.progress(1, 2);
      void ctx.checkpoint({ at: 1 });
      void ctx.log(42 as unknown as string);
      await systemClock.sleep(50);
      done.open();
      return text('ignored');
    });
    try {
      engine = engineFor(store, [careless]);
      engine.start();
      const { task } = await engine.submit({ owner: OWNER, tool: 'careless', args: {}, wire: 'mcp-tasks-ext' });
      await until(async () => (await store.get(OWNER, task.id, systemClock.now()))?.leaseOwner, 'claimed');
      await engine.cancel(OWNER, task.id);
      await done.promise;
      await systemClock.sleep(50);
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
});
