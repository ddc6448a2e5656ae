import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import { createLocalEvents } from '../../src/store/events.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { engineFor, OWNER, text, tool, until } from './helpers.js';

const engines: TaskEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
});

describe('two engines on one store', () => {
  it('run 1,000 tasks, each exactly once per epoch, with distinct ids', async () => {
    const store = createMemoryTaskStore();
    const events = createLocalEvents();
    const runs = new Map<string, number>();
    const byNode = new Map<string, number>();
    const make = (node: string) =>
      tool('job', async (args, ctx) => {
        const key = `${ctx.taskId}:${ctx.epoch}`;
        runs.set(key, (runs.get(key) ?? 0) + 1);
        byNode.set(node, (byNode.get(node) ?? 0) + 1);
        await new Promise((resolve) => setImmediate(resolve)); // let the other node interleave
        return text(String(args.n));
      });
    // Default 10 s lease: no task may legitimately be re-claimed during this test.
    const options = { leaseMs: 10_000, heartbeatMs: 3_000, claimIntervalMs: 20, events };
    const a = engineFor(store, [make('a')], { ...options, nodeId: 'node-a' });
    const b = engineFor(store, [make('b')], { ...options, nodeId: 'node-b' });
    engines.push(a, b);
    a.start();
    b.start();
    const submitted = await Promise.all(
      Array.from({ length: 1000 }, (_, n) =>
        (n % 2 === 0 ? a : b).submit({ owner: OWNER, tool: 'job', args: { n }, wire: 'mcp-tasks-ext' }),
      ),
    );
    const ids = submitted.map((s) => s.task.id);
    expect(new Set(ids).size).toBe(1000);

    await until(async () => {
      const page = await store.list(OWNER, { limit: 1000, status: ['completed'] }, systemClock.now());
      return page.tasks.length === 1000;
    }, 'all 1,000 completed');
    expect(runs.size).toBe(1000);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect([...runs.keys()].every((key) => key.endsWith(':1'))).toBe(true);
    expect(byNode.get('a')).toBeGreaterThan(0);
    expect(byNode.get('b')).toBeGreaterThan(0);
    for (const [i, id] of ids.entries()) {
      const task = await store.get(OWNER, id, systemClock.now());
      expect(task?.result).toEqual(text(String(i)));
    }
  });
});
