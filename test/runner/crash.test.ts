import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/ports.js';
import { systemClock } from '../../src/core/system.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import type { Fence } from '../../src/store/port.js';
import {
  BACKENDS,
  closeStores,
  aborted,
  engineFor,
  gate,
  nodeStore,
  OWNER,
  text,
  tool,
  until,
  untilStatus,
} from './helpers.js';

/** Engines that are alive at the end of a test; a killed one is abandoned like a dead process. */
const engines: TaskEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
  await closeStores();
});

function start(engine: TaskEngine): TaskEngine {
  engine.start();
  return engine;
}

interface Run {
  readonly node: string;
  readonly epoch: number;
  readonly attempt: number;
  readonly lastCheckpoint: unknown;
  readonly at: number;
}

describe.each(BACKENDS)('crash recovery (S3, S9) ($name)', ({ open }) => {
  it('re-runs a dead node’s task with epoch + 1 from its checkpoint; stale-epoch writes change nothing', async () => {
    const inner = await open();
    const storeA = nodeStore(inner);
    const runs: Run[] = [];
    const checkpointed = gate();
    const make = (node: string) =>
      tool('job', async (_a, ctx) => {
        const { epoch, attempt, lastCheckpoint } = ctx;
        runs.push({ node, epoch, attempt, lastCheckpoint, at: systemClock.now() });
        if (node === 'node-a') {
          await ctx.checkpoint({ step: 1 });
          checkpointed.open();
          await aborted(ctx.signal); // never, on a dead node
        }
        return text(`done by ${node}`);
      });
    const a = start(engineFor(storeA, [make('node-a')], { nodeId: 'node-a' }));
    const { task } = await a.submit({ owner: OWNER, tool: 'job', args: {}, wire: 'mcp-tasks-ext' });
    await checkpointed.promise;
    storeA.kill(); // node A dies: from now on it neither heartbeats nor writes anything
    const lastLease = (await inner.get(OWNER, task.id, systemClock.now()))?.leaseExpiresAt ?? Infinity;

    const b = start(engineFor(inner, [make('node-b')], { nodeId: 'node-b' }));
    engines.push(b);
    const done = await untilStatus(inner, task.id, (t) => t.status === 'completed', 'completion on node B');
    expect(runs.map(({ node, epoch, attempt, lastCheckpoint }) => ({ node, epoch, attempt, lastCheckpoint }))).toEqual([
      { node: 'node-a', epoch: 1, attempt: 1, lastCheckpoint: undefined },
      { node: 'node-b', epoch: 2, attempt: 2, lastCheckpoint: { step: 1 } },
    ]);
    // B could only claim once A's last lease had run out.
    expect(runs[1]?.at).toBeGreaterThanOrEqual(lastLease);
    expect(done).toMatchObject({ epoch: 2, result: text('done by node-b'), leaseOwner: null });

    // Every write fenced by A's claim is refused and leaves the task as it is (S3).
    const stale: Fence = { taskId: task.id, workerId: 'node-a', epoch: 1 };
    const now = systemClock.now();
    const before = await inner.get(OWNER, task.id, now);
    const writes = [
      () => inner.heartbeat(stale, 300, now),
      () => inner.progress(stale, { done: 9 }, now),
      () => inner.checkpoint(stale, { step: 99 }, now),
      () => inner.requestInput(stale, 'input-x', { method: 'elicitation/create', params: {} }, now),
      () => inner.finish(stale, { status: 'completed', result: { ...text('stale') }, resultDigest: 'x' }, now),
      () => inner.release(stale, now),
    ];
    for (const write of writes) await expect(write()).rejects.toMatchObject({ code: 'lease_lost' });
    expect(await inner.get(OWNER, task.id, now)).toEqual(before);
  });

  it('fences out a stalled node whose writes land after another node re-claimed (zombie)', async () => {
    const inner = await open();
    const storeA = nodeStore(inner);
    const zombie: { reason?: unknown; checkpointError?: unknown } = {};
    const aStarted = gate();
    const bCheckpointed = gate();
    const bRelease = gate();
    const a = start(
      engineFor(
        storeA,
        [
          tool('job', async (_a, ctx) => {
            await ctx.checkpoint('a1');
            aStarted.open();
            zombie.reason = await aborted(ctx.signal);
            zombie.checkpointError = await ctx.checkpoint('zombie').catch((e: unknown) => e);
            return text('zombie result');
          }),
        ],
        { nodeId: 'node-a' },
      ),
    );
    engines.push(a);
    const { task } = await a.submit({ owner: OWNER, tool: 'job', args: {}, wire: 'mcp-tasks-ext' });
    await aStarted.promise;
    storeA.freeze(); // A stalls: its heartbeats are held back

    const seenByB: unknown[] = [];
    const b = start(
      engineFor(
        inner,
        [
          tool('job', async (_a, ctx) => {
            seenByB.push(ctx.lastCheckpoint, ctx.epoch);
            await ctx.checkpoint('b1');
            bCheckpointed.open();
            await bRelease.promise;
            return text('b result');
          }),
        ],
        { nodeId: 'node-b' },
      ),
    );
    engines.push(b);
    await bCheckpointed.promise;
    expect(seenByB).toEqual(['a1', 2]);

    storeA.thaw(); // A's held heartbeat lands: lease_lost, the handler is aborted
    await until(() => zombie.checkpointError, 'zombie checkpoint attempt');
    expect(zombie.reason).toMatchObject({ code: 'lease_lost', details: { abort: 'lease_lost' } });
    expect(zombie.checkpointError).toMatchObject({ code: 'lease_lost' });
    await a.stop(); // waits until A's run has concluded
    const during = await inner.get(OWNER, task.id, systemClock.now());
    expect(during).toMatchObject({ status: 'working', epoch: 2, leaseOwner: 'node-b', checkpoint: 'b1', result: null });

    bRelease.open();
    const done = await untilStatus(inner, task.id, (t) => t.status === 'completed');
    expect(done.result).toEqual(text('b result'));
    expect(done.lateOutcome).toBeNull();
    // A returned a result after losing its lease, and wrote nothing: no finish was even attempted.
    expect(storeA.calls.get('finish')).toBeUndefined();
  });

  it('stop() aborts with a shutdown reason and releases the lease, so another node re-claims at once', async () => {
    const inner = await open();
    const reasons: unknown[] = [];
    const started = gate();
    const a = start(
      engineFor(
        inner,
        [
          tool('job', async (_a, ctx) => {
            await ctx.checkpoint('half');
            started.open();
            reasons.push(await aborted(ctx.signal));
            throw ctx.signal.reason;
          }),
        ],
        { nodeId: 'node-a', leaseMs: 60_000, heartbeatMs: 20_000 },
      ),
    );
    const { task } = await a.submit({ owner: OWNER, tool: 'job', args: {}, wire: 'mcp-tasks-ext' });
    await started.promise;
    const claimed = await inner.get(OWNER, task.id, systemClock.now());
    await a.stop();
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatchObject({ code: 'unavailable', details: { abort: 'shutdown' } });
    const released = await inner.get(OWNER, task.id, systemClock.now());
    expect(released).toMatchObject({ status: 'working', leaseOwner: null, leaseExpiresAt: null, checkpoint: 'half' });

    const seen: unknown[] = [];
    const b = start(
      engineFor(inner, [tool('job', async (_a, ctx) => (seen.push(ctx.lastCheckpoint, ctx.epoch), text('b')))], {
        nodeId: 'node-b',
        leaseMs: 60_000,
      }),
    );
    engines.push(b);
    await untilStatus(inner, task.id, (t) => t.status === 'completed');
    expect(seen).toEqual(['half', 2]);
    // Long before A's 60 s lease would have expired.
    expect(systemClock.now()).toBeLessThan(claimed?.leaseExpiresAt ?? 0);
  });

  it('leaves no sleep pending after stop(), so no timer keeps the process alive', async () => {
    // The runner waits only through clock.sleep (setTimeout is banned in src/runner by lint).
    let pending = 0;
    const clock: Clock = {
      now: () => systemClock.now(),
      sleep: async (ms, signal) => {
        pending++;
        try {
          await systemClock.sleep(ms, signal);
        } finally {
          pending--;
        }
      },
    };
    const store = await open();
    const engine = engineFor(
      store,
      [
        tool('wait', async (_a, ctx) => {
          await aborted(ctx.signal);
          throw ctx.signal.reason;
        }),
      ],
      { clock },
    );
    engine.start();
    const { task } = await engine.submit({ owner: OWNER, tool: 'wait', args: {}, wire: 'mcp-tasks-ext' });
    await untilStatus(store, task.id, (t) => t.epoch === 1);
    const waiting = engine.waitForChange(OWNER, task.id, { timeoutMs: 10_000 });
    // Claim loop, sweeper, heartbeat and the waiter.
    await until(() => pending >= 4, 'four sleeps');
    await engine.stop();
    await engine.cancel(OWNER, task.id);
    expect((await waiting).status).toBe('cancelled');
    expect(pending).toBe(0);
  });
});
