import { afterEach, describe, expect, it } from 'vitest';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import type { TaskStore } from '../../src/store/port.js';
import { BACKENDS, closeStores, engineFor, gate, OWNER, text, tool, untilStatus } from './helpers.js';

const engines: TaskEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
  await closeStores();
});

describe.each(BACKENDS)('waitForChange ($name)', ({ open }) => {
  it('resolves on the next change, and at once for a terminal task', async () => {
    const store = await open();
    const step = gate();
    const finish = gate();
    const engine = engineFor(store, [
      tool('steps', async (_a, ctx) => {
        await step.promise;
        await ctx.progress(1, 2, 'half');
        await finish.promise;
        return text('ok');
      }),
    ]);
    engines.push(engine);
    engine.start();
    const { task } = await engine.submit({ owner: OWNER, tool: 'steps', args: {}, wire: 'mcp-tasks-ext' });
    const changed = engine.waitForChange(OWNER, task.id, { sinceUpdatedAt: task.updatedAt, timeoutMs: 10_000 });
    step.open();
    const half = await changed;
    expect(half.progress).toEqual({ done: 1, total: 2, message: 'half' });
    finish.open();
    const done = await engine.waitForChange(OWNER, task.id, { sinceUpdatedAt: half.updatedAt, timeoutMs: 10_000 });
    expect(done.status).toBe('completed');
    // Terminal: no waiting even without a newer change.
    const again = await engine.waitForChange(OWNER, task.id, { sinceUpdatedAt: done.updatedAt, timeoutMs: 10_000 });
    expect(again).toEqual(done);
  });

  it('sees a change made through another engine (no shared events) by re-reading', async () => {
    const store = await open();
    const a = engineFor(store, [tool('idle', async () => text('x'))]);
    const b = engineFor(store, []);
    // Never started: the task stays working until B cancels it.
    const { task } = await a.submit({ owner: OWNER, tool: 'idle', args: {}, wire: 'mcp-tasks-ext' });
    const changed = a.waitForChange(OWNER, task.id, { sinceUpdatedAt: task.updatedAt, timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await b.cancel(OWNER, task.id);
    expect((await changed).status).toBe('cancelled');
  });

  it('resolves with the unchanged task on timeout, and rejects not_found for a foreign id', async () => {
    const store = await open();
    const engine = engineFor(store, [tool('idle', async () => text('x'))]);
    const { task } = await engine.submit({ owner: OWNER, tool: 'idle', args: {}, wire: 'mcp-tasks-ext' });
    const same = await engine.waitForChange(OWNER, task.id, { sinceUpdatedAt: task.updatedAt, timeoutMs: 30 });
    expect(same).toEqual(await untilStatus(store, task.id, () => true));
    expect(same.status).toBe('working');
    await expect(engine.waitForChange('mallory', task.id, { timeoutMs: 30 })).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('rejects with the reason when its signal aborts', async () => {
    const store = await open();
    const engine = engineFor(store, [tool('idle', async () => text('x'))]);
    const { task } = await engine.submit({ owner: OWNER, tool: 'idle', args: {}, wire: 'mcp-tasks-ext' });
    const controller = new AbortController();
    const waiting = engine.waitForChange(OWNER, task.id, { timeoutMs: 10_000, signal: controller.signal });
    controller.abort(new Error('client gone'));
    await expect(waiting).rejects.toThrow('client gone');
  });

  it('tells the store while a caller blocks, until it resolves or rejects', async () => {
    const store = await open();
    const seen: boolean[] = [];
    const told: TaskStore = {
      ...store,
      callerWaiting: (waiting) => {
        seen.push(waiting);
        store.callerWaiting?.(waiting);
      },
    };
    const engine = engineFor(told, [tool('idle', async () => text('x'))]);
    const { task } = await engine.submit({ owner: OWNER, tool: 'idle', args: {}, wire: 'mcp-tasks-ext' });
    expect(seen).toEqual([]);
    await engine.waitForChange(OWNER, task.id, { sinceUpdatedAt: task.updatedAt, timeoutMs: 20 });
    expect(seen).toEqual([true, false]);
    await expect(engine.waitForChange('mallory', task.id, { timeoutMs: 20 })).rejects.toMatchObject({
      code: 'not_found',
    });
    expect(seen).toEqual([true, false, true, false]);
  });
});
