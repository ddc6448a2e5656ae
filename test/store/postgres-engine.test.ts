import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { createPostgresEvents, type PostgresTaskEvents } from '../../src/store/postgres/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { aborted, engineFor, OWNER, text, tool, until } from '../runner/helpers.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, openStore, PG_URL } from './postgres-fixture.js';

// Two engines ("nodes"), each with its own pool and its own LISTEN connection, on one database.
// The heartbeat is 5 s here, so anything faster than that crossed nodes by LISTEN/NOTIFY.
const SLOW_HEARTBEAT = { leaseMs: 15_000, heartbeatMs: 5_000, claimIntervalMs: 50 } as const;

if (PG_URL === '') {
  describe('PostgreSQL: engines on two nodes', failWithoutDatabase);
} else {
  describe('PostgreSQL: engines on two nodes', () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function cluster(tools: (node: string) => Parameters<typeof engineFor>[1], options = {}) {
      const schema = freshSchema('engine');
      const channel = `terminus_${schema}`;
      const admin = adminPool();
      cleanups.push(async () => {
        await dropSchema(admin, schema);
        await admin.end();
      });
      const node = async (name: string): Promise<{ engine: TaskEngine; store: TaskStore }> => {
        const store = await openStore(schema);
        const events: PostgresTaskEvents = createPostgresEvents({ connectionString: PG_URL, channel });
        await events.ready();
        const engine = engineFor(store, tools(name), { ...SLOW_HEARTBEAT, ...options, events, nodeId: name });
        cleanups.push(async () => {
          await engine.stop();
          await events.close();
          await store.close();
        });
        return { engine, store };
      };
      return { a: await node('node-a'), b: await node('node-b') };
    }

    it('a cancel given on node B aborts the handler running on node A well within one heartbeat', async () => {
      let runningOn = '';
      const { a, b } = await cluster((node) => [
        tool('wait', async (_args, ctx) => {
          runningOn = node;
          await aborted(ctx.signal);
          return text('stopped');
        }),
      ]);
      a.engine.start(); // only A runs handlers
      const { task } = await a.engine.submit({ owner: OWNER, tool: 'wait', args: {}, wire: 'mcp-tasks-ext' });
      await until(() => runningOn === 'node-a', 'the handler to start on A');
      const started = performance.now();
      const outcome = await b.engine.cancel(OWNER, task.id);
      expect(outcome.outcome).toBe('cancelled');
      await until(
        async () => (await a.store.get(OWNER, task.id, systemClock.now()))?.leaseOwner === null,
        'A to let go',
      );
      expect(performance.now() - started).toBeLessThan(2_500);
      const stored = await b.store.get(OWNER, task.id, systemClock.now());
      expect(stored?.status).toBe('cancelled');
    });

    it('an input response given on node B wakes the handler waiting on node A', async () => {
      const { a, b } = await cluster(() => [
        tool('ask', async (_args, ctx) => {
          const reply = await ctx.requestInput({ type: 'object', properties: {} }, 'go on?');
          return text(`${reply.action}:${JSON.stringify(reply.content ?? {})}`);
        }),
      ]);
      a.engine.start();
      const { task } = await a.engine.submit({ owner: OWNER, tool: 'ask', args: {}, wire: 'mcp-tasks-ext' });
      const waiting = await until(async () => {
        const t = await b.store.get(OWNER, task.id, systemClock.now());
        return t?.status === 'input_required' ? t : undefined;
      }, 'input_required');
      const [key] = Object.keys(waiting.inputRequests);
      const started = performance.now();
      await b.engine.respond(OWNER, task.id, { [key as string]: { action: 'accept', content: { ok: true } } });
      const done = await until(async () => {
        const t = await b.store.get(OWNER, task.id, systemClock.now());
        return t?.status === 'completed' ? t : undefined;
      }, 'completed');
      expect(performance.now() - started).toBeLessThan(2_500);
      expect(done.result).toEqual(text('accept:{"ok":true}'));
    });

    it('200 tasks submitted through both nodes run exactly once each, on both nodes', async () => {
      const runs = new Map<string, number>();
      const byNode = new Map<string, number>();
      const { a, b } = await cluster((node) => [
        tool('job', async (args, ctx) => {
          runs.set(`${ctx.taskId}:${ctx.epoch}`, (runs.get(`${ctx.taskId}:${ctx.epoch}`) ?? 0) + 1);
          byNode.set(node, (byNode.get(node) ?? 0) + 1);
          await new Promise((resolve) => setTimeout(resolve, 2));
          return text(String(args.n));
        }),
      ]);
      a.engine.start();
      b.engine.start();
      const submitted = await Promise.all(
        Array.from({ length: 200 }, (_, n) =>
          (n % 2 === 0 ? a : b).engine.submit({ owner: OWNER, tool: 'job', args: { n }, wire: 'mcp-tasks-ext' }),
        ),
      );
      await until(
        async () =>
          (await a.store.list(OWNER, { limit: 1000, status: ['completed'] }, systemClock.now())).tasks.length === 200,
        'all 200 completed',
        30_000,
      );
      expect(runs.size).toBe(200);
      expect([...runs.values()].every((count) => count === 1)).toBe(true);
      expect(byNode.get('node-a')).toBeGreaterThan(0);
      expect(byNode.get('node-b')).toBeGreaterThan(0);
      for (const [n, { task }] of submitted.entries()) {
        expect((await b.store.get(OWNER, task.id, systemClock.now()))?.result).toEqual(text(String(n)));
      }
    });
  });
}
