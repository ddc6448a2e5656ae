import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { requestDigest } from '../../src/core/digest.js';
import { systemClock } from '../../src/core/system.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { effectiveTtl } from '../../src/runner/submit.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { engineFor, nodeStore, OWNER, text, tool } from './helpers.js';

const engines: TaskEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
});

const report = defineTaskTool({
  name: 'report',
  description: 'test',
  inputSchema: z.object({ pages: z.number().int().positive(), title: z.string() }),
  handler: async () => text('ok'),
});

async function listAll(store: ReturnType<typeof createMemoryTaskStore>) {
  return (await store.list(OWNER, { limit: 1000 }, systemClock.now())).tasks;
}

describe('engine.submit', () => {
  it('refuses an unknown tool with invalid_argument and writes nothing', async () => {
    const inner = createMemoryTaskStore();
    const store = nodeStore(inner);
    const engine = engineFor(store, [report]);
    const error = await engine.submit({ owner: OWNER, tool: 'nope', args: {}, wire: 'mcp-tasks-ext' }).catch((e) => e);
    expect(error).toMatchObject({ name: 'TerminusError', code: 'invalid_argument' });
    expect(error.message).toContain('Unknown tool: "nope"');
    expect(error.message).toContain('report');
    expect(store.calls.get('create')).toBeUndefined();
    expect(await listAll(inner)).toHaveLength(0);
  });

  it('refuses invalid arguments with the zod issues summarised, and writes nothing', async () => {
    const inner = createMemoryTaskStore();
    const store = nodeStore(inner);
    const engine = engineFor(store, [report]);
    const error = await engine
      .submit({ owner: OWNER, tool: 'report', args: { pages: -1 }, wire: 'mcp-tasks-ext' })
      .catch((e) => e);
    expect(error).toMatchObject({ code: 'invalid_argument' });
    expect(error.message).toMatch(/^Invalid arguments for tool report: /);
    expect(error.message).toContain('pages: ');
    expect(error.message).toContain('title: ');
    expect(error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual(['pages', 'title']);
    expect(store.calls.get('create')).toBeUndefined();
    expect(await listAll(inner)).toHaveLength(0);
  });

  it('refuses a forbidden tool as a task', async () => {
    const store = createMemoryTaskStore();
    const engine = engineFor(store, [tool('greet', async () => text('hi'), { taskSupport: 'forbidden' })]);
    await expect(engine.submit({ owner: OWNER, tool: 'greet', args: {}, wire: 'mcp-tasks-ext' })).rejects.toMatchObject(
      { code: 'invalid_argument' },
    );
    expect(await listAll(store)).toHaveLength(0);
  });

  it('creates the task durably with digest, wire, poll interval and TTL before resolving (S1)', async () => {
    const store = createMemoryTaskStore();
    const engine = engineFor(store, [report], { defaultPollIntervalMs: 1500 });
    const args = { pages: 3, title: 't' };
    const { task, created } = await engine.submit({
      owner: OWNER,
      tool: 'report',
      args,
      wire: 'sep-1391',
      submissionKey: 'k1',
      keepAliveMs: 60_000,
    });
    expect(created).toBe(true);
    expect(await store.get(OWNER, task.id, systemClock.now())).toMatchObject({
      id: task.id,
      status: 'working',
      requestDigest: requestDigest('report', args),
      wire: 'sep-1391',
      submissionKey: 'k1',
      pollIntervalMs: 1500,
      ttlMs: 3_600_000,
      keepAliveMs: 60_000,
      epoch: 0,
    });
    // Same key, same request: the same task, not a second one (S5).
    const again = await engine.submit({ owner: OWNER, tool: 'report', args, wire: 'sep-1391', submissionKey: 'k1' });
    expect(again).toMatchObject({ created: false, task: { id: task.id } });
    await expect(engine.get('bob', task.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(engine.get(OWNER, 'no-such-id')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('wakes the claim loop at once instead of waiting for the next interval', async () => {
    const store = createMemoryTaskStore();
    const ran: string[] = [];
    // A claim interval far longer than the test: only the wake-up can start the handler in time.
    const engine = engineFor(store, [tool('t', async (_a, ctx) => (ran.push(ctx.taskId), text('ok')))], {
      claimIntervalMs: 60_000,
    });
    engines.push(engine);
    engine.start();
    await new Promise((resolve) => setTimeout(resolve, 20)); // the first, empty claim has happened
    const { task } = await engine.submit({ owner: OWNER, tool: 't', args: {}, wire: 'mcp-tasks-ext' });
    const done = await engine.waitForChange(OWNER, task.id, { sinceUpdatedAt: task.updatedAt, timeoutMs: 5_000 });
    expect(done.status).toBe('completed');
    expect(ran).toEqual([task.id]);
  });

  it('gives 1,000 parallel submissions 1,000 distinct ids', async () => {
    const store = createMemoryTaskStore();
    const engine = engineFor(store, [report]);
    const outcomes = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        engine.submit({ owner: OWNER, tool: 'report', args: { pages: i + 1, title: 'x' }, wire: 'mcp-tasks-ext' }),
      ),
    );
    const ids = new Set(outcomes.map((o) => o.task.id));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(await listAll(store)).toHaveLength(1000);
  });
});

describe('effectiveTtl', () => {
  const settings = { defaultTtlMs: 3_600_000, maxTtlMs: undefined };
  it('defaults to the tool TTL, else the engine default', () => {
    expect(effectiveTtl(settings, {}, undefined)).toBe(3_600_000);
    expect(effectiveTtl(settings, { ttlMs: 5_000 }, undefined)).toBe(5_000);
    expect(effectiveTtl(settings, { ttlMs: null }, undefined)).toBeNull();
  });
  it("clamps a requested TTL to the tool's and the engine's maximum", () => {
    expect(effectiveTtl(settings, { ttlMs: 5_000 }, 60_000)).toBe(5_000);
    expect(effectiveTtl(settings, { ttlMs: 5_000 }, 1_000)).toBe(1_000);
    expect(effectiveTtl(settings, { ttlMs: 5_000 }, null)).toBe(5_000);
    expect(effectiveTtl({ ...settings, maxTtlMs: 2_000 }, {}, null)).toBe(2_000);
    expect(effectiveTtl({ ...settings, maxTtlMs: 2_000 }, { ttlMs: null }, undefined)).toBe(2_000);
    expect(effectiveTtl(settings, {}, 7_200_000)).toBe(7_200_000);
    expect(() => effectiveTtl(settings, {}, -1)).toThrow(/non-negative/);
  });
});
