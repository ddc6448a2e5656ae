import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { engineFor, gate, OWNER, text, tool, until, untilStatus } from './helpers.js';

const engines: TaskEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
});

describe('TTL sweeper', () => {
  it('deletes expired terminal tasks every sweepIntervalMs and never a working one (S7)', async () => {
    const inner = createMemoryTaskStore();
    let swept = 0;
    const store: TaskStore = {
      ...inner,
      sweepExpired: async (now, limit) => {
        const n = await inner.sweepExpired(now, limit);
        swept += n;
        return n;
      },
    };
    const hold = gate();
    const engine = engineFor(
      store,
      [tool('quick', async () => text('ok')), tool('slow', async () => (await hold.promise, text('late')))],
      { sweepIntervalMs: 20 },
    );
    engines.push(engine);
    engine.start();
    // keepAlive 50 ms from completion; the working task has a 1 ms TTL, long passed while it works.
    const quick = await engine.submit({ owner: OWNER, tool: 'quick', args: {}, wire: 'sep-1391', keepAliveMs: 50 });
    const slow = await engine.submit({ owner: OWNER, tool: 'slow', args: {}, wire: 'mcp-tasks-ext', ttlMs: 1 });
    await until(() => swept === 1, 'one task swept');
    expect(await store.get(OWNER, quick.task.id, systemClock.now())).toBeNull();
    const working = await store.get(OWNER, slow.task.id, systemClock.now());
    expect(working?.status).toBe('working');
    hold.open();
    await untilStatus(store, slow.task.id, (t) => t.status === 'completed');
  });
});
