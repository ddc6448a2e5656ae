import { z } from 'zod';
import { systemClock, systemIds } from '../../src/core/system.js';
import type { TaskRecord } from '../../src/core/task.js';
import { createEngine, type EngineOptions } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { defineTaskTool, type TaskContext, type TaskToolDefinition, type ToolResult } from '../../src/runner/tool.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';

export const OWNER = 'alice';

/** Small real-time values: a dead node's task is re-claimed ~300 ms after its last heartbeat. */
export const FAST = { leaseMs: 300, heartbeatMs: 60, claimIntervalMs: 20 } as const;

export function engineFor(
  store: TaskStore,
  tools: readonly TaskToolDefinition<any>[], // eslint-disable-line @typescript-eslint/no-explicit-any
  options: Partial<EngineOptions> = {},
): TaskEngine {
  return createEngine({ store, tools, clock: systemClock, ids: systemIds, ...FAST, ...options });
}

/** A tool whose handler is the given function, with `{ n?: number }` arguments. */
export function tool(
  name: string,
  handler: (args: { n?: number | undefined }, ctx: TaskContext) => Promise<ToolResult>,
  extra: Partial<TaskToolDefinition<{ n?: number | undefined }>> = {},
): TaskToolDefinition<{ n?: number | undefined }> {
  return defineTaskTool({
    name,
    description: `test tool ${name}`,
    inputSchema: z.object({ n: z.number().int().optional() }),
    handler,
    ...extra,
  });
}

export function text(value: string): ToolResult {
  return { content: [{ type: 'text', text: value }] };
}

export interface Gate<T = void> {
  readonly promise: Promise<T>;
  open(value: T): void;
}

export function gate<T = void>(): Gate<T> {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** Resolves when `signal` aborts, with its reason. */
export function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener('abort', () => resolve(signal.reason), { once: true });
  });
}

/** Polls `probe` every 5 ms until it returns a value other than undefined/false. */
export async function until<T>(
  probe: () => T | Promise<T>,
  what = 'condition',
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const start = performance.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export async function untilStatus(
  store: TaskStore,
  id: string,
  accept: (task: TaskRecord) => boolean,
  what = 'task state',
): Promise<TaskRecord> {
  return until(async () => {
    const task = await store.get(OWNER, id, systemClock.now());
    return task !== null && accept(task) ? task : undefined;
  }, what);
}

/**
 * A store as one node sees it, so a test can make that node die or stall without touching the
 * shared backend: `kill()` makes every later call hang forever (a dead process writes nothing,
 * and its loops never learn anything), `freeze()` holds calls until `thaw()` replays them in order
 * (a stalled process whose writes land late, i.e. a zombie). `calls` counts calls per method.
 */
export interface NodeStore extends TaskStore {
  kill(): void;
  freeze(): void;
  thaw(): void;
  readonly calls: Map<string, number>;
}

export function nodeStore(inner: TaskStore): NodeStore {
  let mode: 'live' | 'dead' | 'frozen' = 'live';
  const held: (() => void)[] = [];
  const calls = new Map<string, number>();
  const wrap =
    <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      if (mode === 'dead') return new Promise<R>(() => {});
      if (mode === 'frozen') {
        return new Promise<R>((resolve, reject) => held.push(() => void fn(...args).then(resolve, reject)));
      }
      return fn(...args);
    };
  const methods = Object.fromEntries(
    // Methods only: the webhook outbox (an object) is not one of a node's store calls.
    (Object.keys(inner) as (keyof TaskStore)[])
      .filter((name) => typeof inner[name] === 'function')
      .map((name) => [name, wrap(name, (inner[name] as (...a: unknown[]) => Promise<unknown>).bind(inner))]),
  ) as unknown as TaskStore;
  return {
    ...methods,
    calls,
    kill: () => {
      mode = 'dead';
    },
    freeze: () => {
      mode = 'frozen';
    },
    thaw: () => {
      mode = 'live';
      for (const run of held.splice(0)) run();
    },
  };
}

const opened: TaskStore[] = [];

/** The backends the runner tests run against: the engine must not depend on one store's quirks. */
export const BACKENDS: readonly { readonly name: string; readonly open: () => Promise<TaskStore> }[] = [
  { name: 'memory', open: async () => track(createMemoryTaskStore()) },
  { name: 'sqlite', open: async () => track(await openSqliteTaskStore({ path: ':memory:' })) },
];

function track(store: TaskStore): TaskStore {
  opened.push(store);
  return store;
}

/** Closes every store opened through BACKENDS (after the engines using them were stopped). */
export async function closeStores(): Promise<void> {
  await Promise.all(opened.splice(0).map((store) => store.close()));
}
