import { afterEach, describe, expect, test } from 'vitest';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { engineFor, gate, OWNER, text, tool, until } from './helpers.js';

/** Issue 12 item 9 at the engine: the per-caller cap on unfinished tasks and the tombstone sweep. */
const engines: TaskEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
});

describe('engine limits (issue 12 item 9)', () => {
  test('T-79: one submit over maxLiveTasksPerOwner is resource_exhausted naming the limit; others and finished tasks do not count', async () => {
    const store = await openSqliteTaskStore({ path: ':memory:' });
    const hold = gate();
    const engine = engineFor(store, [tool('slow', async () => (await hold.promise, text('ok')))], {
      maxLiveTasksPerOwner: 2,
    });
    engines.push(engine);
    const a = await engine.submit({ owner: OWNER, tool: 'slow', args: {}, wire: 'mcp-tasks-ext' });
    await engine.submit({ owner: OWNER, tool: 'slow', args: {}, wire: 'mcp-tasks-ext' });
    const refused = await engine.submit({ owner: OWNER, tool: 'slow', args: {}, wire: 'mcp-tasks-ext' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({
      code: 'resource_exhausted',
      retryable: true,
      details: { reason: 'too_many_active_tasks', limit: 2 },
    });
    expect((await store.list(OWNER, { limit: 10 }, Date.now())).tasks).toHaveLength(2);
    // Another caller is not affected; a finished task frees its place.
    await engine.submit({ owner: 'bob', tool: 'slow', args: {}, wire: 'mcp-tasks-ext' });
    await engine.cancel(OWNER, a.task.id);
    await engine.submit({ owner: OWNER, tool: 'slow', args: {}, wire: 'mcp-tasks-ext' });
    hold.open();
    await store.close();
  });

  test('S6: the sweeper deletes submission-key tombstones after keyRetentionMs, and only tombstones', async () => {
    const store = createMemoryTaskStore();
    const engine = engineFor(store, [tool('quick', async () => text('ok'))], {
      sweepIntervalMs: 20,
      keyRetentionMs: 50,
    });
    engines.push(engine);
    const used = await engine.submit({
      owner: OWNER,
      tool: 'quick',
      args: {},
      wire: 'mcp-tasks-ext',
      submissionKey: 'k-used',
    });
    expect(await engine.lookupKey(OWNER, 'k-burned')).toEqual({ kind: 'never_created' });
    await expect(
      engine.submit({ owner: OWNER, tool: 'quick', args: {}, wire: 'mcp-tasks-ext', submissionKey: 'k-burned' }),
    ).rejects.toMatchObject({ code: 'submission_key_burned' });
    engine.start();
    // Once swept, the burned key is a fresh key again; the used one still finds its task (S5).
    await until(async () => {
      try {
        return (
          await engine.submit({
            owner: OWNER,
            tool: 'quick',
            args: {},
            wire: 'mcp-tasks-ext',
            submissionKey: 'k-burned',
          })
        ).created;
      } catch {
        return false;
      }
    }, 'the tombstone swept');
    const again = await engine.submit({
      owner: OWNER,
      tool: 'quick',
      args: {},
      wire: 'mcp-tasks-ext',
      submissionKey: 'k-used',
    });
    expect(again).toMatchObject({ created: false, task: { id: used.task.id } });
  });
});
