import { afterEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/digest.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { ToolRpcError } from '../../src/runner/tool.js';
import { BACKENDS, closeStores, engineFor, gate, OWNER, text, tool, untilStatus } from './helpers.js';

const engines: TaskEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
  await closeStores();
});

function start(...args: Parameters<typeof engineFor>): TaskEngine {
  const engine = engineFor(...args);
  engines.push(engine);
  engine.start();
  return engine;
}

describe.each(BACKENDS)('engine: handler outcomes ($name)', ({ open }) => {
  it('stores a returned CallToolResult as completed, as returned, with its digest', async () => {
    const store = await open();
    const result = { content: [{ type: 'text', text: 'done' }], structuredContent: { pages: 3 } };
    const engine = start(store, [tool('ok', async () => result)]);
    const { task, created } = await engine.submit({ owner: OWNER, tool: 'ok', args: { n: 1 }, wire: 'mcp-tasks-ext' });
    expect(created).toBe(true);
    expect(task.status).toBe('working');
    const done = await untilStatus(store, task.id, (t) => t.status === 'completed');
    expect(done.result).toEqual(result);
    expect(done.result).not.toHaveProperty('resultType');
    expect(done.resultDigest).toBe(digestOf(result));
    expect(done.epoch).toBe(1);
    expect(done.leaseOwner).toBeNull();
  });

  it('turns a thrown Error into completed with isError and the message (X-08, X-51)', async () => {
    const store = await open();
    const engine = start(store, [
      tool('boom', async () => {
        throw new Error('disk full');
      }),
    ]);
    const { task } = await engine.submit({ owner: OWNER, tool: 'boom', args: {}, wire: 'mcp-tasks-ext' });
    const done = await untilStatus(store, task.id, (t) => t.status !== 'working');
    expect(done.status).toBe('completed');
    expect(done.error).toBeNull();
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'disk full' }], isError: true });
  });

  it('turns a ToolRpcError into failed with its code, message, data and a status message (X-53)', async () => {
    const store = await open();
    const engine = start(store, [
      tool('rpc', async () => {
        throw new ToolRpcError(-32000, 'quota exceeded', { retryAfter: 5 });
      }),
    ]);
    const { task } = await engine.submit({ owner: OWNER, tool: 'rpc', args: {}, wire: 'mcp-tasks-ext' });
    const done = await untilStatus(store, task.id, (t) => t.status !== 'working');
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: -32000, message: 'quota exceeded', data: { retryAfter: 5 } });
    expect(done.statusMessage).toBe('quota exceeded');
    expect(done.result).toBeNull();
  });

  it('persists progress and checkpoints while the handler runs', async () => {
    const store = await open();
    const hold = gate();
    const seen: unknown[] = [];
    const engine = start(store, [
      tool('steps', async (_args, ctx) => {
        seen.push(ctx.lastCheckpoint, ctx.attempt, ctx.epoch);
        await ctx.progress(2, 5, 'page 2');
        await ctx.checkpoint({ page: 2 });
        await hold.promise;
        return text('ok');
      }),
    ]);
    const { task } = await engine.submit({ owner: OWNER, tool: 'steps', args: {}, wire: 'mcp-tasks-ext' });
    const running = await untilStatus(store, task.id, (t) => t.checkpoint !== null);
    expect(running.status).toBe('working');
    expect(running.progress).toEqual({ done: 2, total: 5, message: 'page 2' });
    expect(running.statusMessage).toBe('page 2');
    expect(running.checkpoint).toEqual({ page: 2 });
    expect(seen).toEqual([undefined, 1, 1]);
    hold.open();
    await untilStatus(store, task.id, (t) => t.status === 'completed');
  });

  it('keeps the lease alive while a handler outlives several lease lengths', async () => {
    const store = await open();
    const hold = gate();
    const runs: number[] = [];
    const engine = start(store, [
      tool('long', async (_a, ctx) => {
        runs.push(ctx.epoch);
        await hold.promise;
        return text('ok');
      }),
    ]);
    const { task } = await engine.submit({ owner: OWNER, tool: 'long', args: {}, wire: 'mcp-tasks-ext' });
    const first = await untilStatus(store, task.id, (t) => t.leaseExpiresAt !== null);
    // Wait until the lease was extended past three times its first expiry window.
    await untilStatus(store, task.id, (t) => (t.leaseExpiresAt ?? 0) > (first.leaseExpiresAt ?? 0) + 3 * 300);
    hold.open();
    const done = await untilStatus(store, task.id, (t) => t.status === 'completed');
    expect(done.epoch).toBe(1);
    expect(runs).toEqual([1]);
  });
});

describe.each(BACKENDS)('engine: runInline ($name)', ({ open }) => {
  it('runs without a task and maps outcomes like tasks', async () => {
    const store = await open();
    const progress: unknown[] = [];
    const engine = engineFor(store, [
      tool('ok', async (args, ctx) => {
        await ctx.progress(1, 2);
        await ctx.checkpoint('ignored');
        return text(`n=${args.n}`);
      }),
      tool('boom', async () => {
        throw new Error('bad');
      }),
      tool('rpc', async () => {
        throw new ToolRpcError(-32001, 'nope');
      }),
      tool('ask', async (_a, ctx) => {
        await ctx.requestInput({ type: 'object' }, 'name?');
        return text('unreachable');
      }),
    ]);
    const signal = new AbortController().signal;
    const ok = await engine.runInline({ tool: 'ok', args: { n: 7 }, signal, onProgress: (p) => progress.push(p) });
    expect(ok).toEqual({ status: 'completed', result: text('n=7') });
    expect(progress).toEqual([{ done: 1, total: 2 }]);
    expect(await engine.runInline({ tool: 'boom', args: {}, signal })).toEqual({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'bad' }], isError: true },
    });
    expect(await engine.runInline({ tool: 'rpc', args: {}, signal })).toEqual({
      status: 'failed',
      error: { code: -32001, message: 'nope' },
    });
    // requestInput needs a task: the handler sees capability_required and, unhandled, a tool error.
    const ask = await engine.runInline({ tool: 'ask', args: {}, signal });
    expect(ask.status).toBe('completed');
    expect(ask.status === 'completed' && ask.result.isError).toBe(true);
    await expect(engine.runInline({ tool: 'ok', args: { n: 'x' }, signal })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    expect((await store.list(OWNER, { limit: 10 }, Date.now())).tasks).toHaveLength(0);
  });

  it('refuses a task-required tool with capability_required, and rejects with the reason when aborted', async () => {
    const store = await open();
    const engine = engineFor(store, [
      tool('only-task', async () => text('x'), { taskSupport: 'required' }),
      tool('slow', async (_a, ctx) => {
        await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('stopped'))));
        return text('unreachable');
      }),
    ]);
    const signal = new AbortController().signal;
    await expect(engine.runInline({ tool: 'only-task', args: {}, signal })).rejects.toMatchObject({
      code: 'capability_required',
    });
    const controller = new AbortController();
    const run = engine.runInline({ tool: 'slow', args: {}, signal: controller.signal });
    controller.abort(new Error('client went away'));
    await expect(run).rejects.toThrow('client went away');
  });
});
