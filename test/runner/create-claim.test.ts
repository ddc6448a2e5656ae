import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { engineFor, gate, OWNER, text, tool, until, untilStatus } from './helpers.js';

// Issue 14 item 4: a task created while this node has a free slot is created already claimed by
// it, in the same commit, so it costs two sequential commits (create, finish) instead of three
// (create, claim, finish); with synchronous=FULL each commit is one fsync.

/** The writes that reached the store, by method and task id, and the event-loop turn each settled in. */
interface Write {
  readonly method: string;
  readonly taskIds: readonly string[];
  readonly turn: number;
}

let turn = 0;
let spinning = true;
const spin = (): void => {
  turn += 1;
  if (spinning) setImmediate(spin);
};

function recording(inner: TaskStore): TaskStore & { readonly writes: Write[]; claimed(): Promise<void> } {
  const writes: Write[] = [];
  const waiting: (() => void)[] = [];
  const record = (method: string, taskIds: readonly string[]): void => {
    if (taskIds.length > 0) writes.push({ method, taskIds, turn });
  };
  return {
    ...inner,
    writes,
    /** Settles once the next claim has returned and the runner has taken its answer. */
    claimed: () =>
      new Promise<void>((resolve) => waiting.push(resolve)).then(() => new Promise((r) => setImmediate(r))),
    create: async (input) => {
      const outcome = await inner.create(input);
      record(outcome.created && outcome.task.leaseOwner !== null ? 'create+claim' : 'create', [outcome.task.id]);
      return outcome;
    },
    claim: async (request) => {
      const tasks = await inner.claim(request);
      record(
        'claim',
        tasks.map((t) => t.id),
      );
      for (const done of waiting.splice(0)) done();
      return tasks;
    },
    finish: async (fence, outcome, now) => {
      const done = await inner.finish(fence, outcome, now);
      record('finish', [fence.taskId]);
      return done;
    },
    get: (owner, id, now) => inner.get(owner, id, now),
    close: () => inner.close(),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'terminus-create-claim-'));
let files = 0;
const engines: TaskEngine[] = [];
const stores: TaskStore[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
afterAll(() => {
  spinning = false;
  rmSync(dir, { recursive: true, force: true });
});

async function setup(concurrency: number, handler = async () => text('ok')) {
  files += 1;
  const store = recording(await openSqliteTaskStore({ path: join(dir, `tasks-${files}.db`) }));
  stores.push(store);
  // A long claim interval: only a wake-up (a submit without a slot, a freed slot) claims.
  const engine = engineFor(store, [tool('work', handler)], {
    concurrency,
    nodeId: 'node-a',
    claimIntervalMs: 60_000,
    leaseMs: 10_000,
    heartbeatMs: 5_000,
  });
  engines.push(engine);
  // The start's first claim is in flight at once; while it commits a submit cannot take a slot.
  const first = store.claimed();
  engine.start();
  await first;
  return { store, engine };
}

const writesOf = (store: { writes: Write[] }, id: string): string[] =>
  store.writes.filter((w) => w.taskIds.includes(id)).map((w) => w.method);

describe('create and claim in one commit (issue 14 item 4)', () => {
  spin();

  it('a free slot: the create commits the claim too (epoch 1, this node), then only the finish', async () => {
    const { store, engine } = await setup(4);
    const { created, task } = await engine.submit({ owner: OWNER, tool: 'work', args: {}, wire: 'mcp-tasks-ext' });
    expect(created).toBe(true);
    // S1: the answer comes after the commit, and what was committed already holds the lease.
    expect(task).toMatchObject({ status: 'working', leaseOwner: 'node-a', epoch: 1 });
    const done = await untilStatus(store, task.id, (t) => t.status === 'completed');
    expect(done).toMatchObject({ epoch: 1, leaseOwner: null });
    expect(writesOf(store, task.id)).toEqual(['create+claim', 'finish']);
  });

  it('no free slot: the task is created unleased and claimed once a slot frees (three commits)', async () => {
    const hold = gate();
    let first = true;
    const { store, engine } = await setup(1, async () => {
      if (first) {
        first = false;
        await hold.promise;
      }
      return text('ok');
    });
    const busy = await engine.submit({ owner: OWNER, tool: 'work', args: { n: 1 }, wire: 'mcp-tasks-ext' });
    const queued = await engine.submit({ owner: OWNER, tool: 'work', args: { n: 2 }, wire: 'mcp-tasks-ext' });
    expect(busy.task).toMatchObject({ leaseOwner: 'node-a', epoch: 1 });
    expect(queued.task).toMatchObject({ leaseOwner: null, epoch: 0 });
    hold.open();
    await untilStatus(store, queued.task.id, (t) => t.status === 'completed');
    expect(writesOf(store, queued.task.id)).toEqual(['create', 'claim', 'finish']);
  });

  it('a duplicate submission (same key) takes no slot and starts no second run', async () => {
    let runs = 0;
    const { store, engine } = await setup(4, async () => {
      runs += 1;
      return text('ok');
    });
    const command = { owner: OWNER, tool: 'work', args: {}, wire: 'mcp-tasks-ext', submissionKey: 'k' } as const;
    const first = await engine.submit(command);
    await untilStatus(store, first.task.id, (t) => t.status === 'completed');
    const again = await engine.submit(command);
    expect(again.created).toBe(false);
    expect(again.task.id).toBe(first.task.id);
    expect(runs).toBe(1);
  });

  it('group commit still batches: 32 concurrent submits commit in one transaction, each leased', async () => {
    const hold = gate();
    const { store, engine } = await setup(64, async () => {
      await hold.promise;
      return text('ok');
    });
    const outcomes = await Promise.all(
      Array.from({ length: 32 }, (_, n) =>
        engine.submit({ owner: OWNER, tool: 'work', args: { n }, wire: 'mcp-tasks-ext' }),
      ),
    );
    const creates = store.writes.filter((w) => w.method === 'create+claim');
    expect(creates).toHaveLength(32);
    // Every create settled in the same event-loop turn: one flush of the write queue, one COMMIT.
    expect(new Set(creates.map((w) => w.turn)).size).toBe(1);
    expect(outcomes.every((o) => o.task.leaseOwner === 'node-a' && o.task.epoch === 1)).toBe(true);
    hold.open();
    for (const { task } of outcomes) await untilStatus(store, task.id, (t) => t.status === 'completed');
    expect(store.writes.filter((w) => w.method === 'claim')).toEqual([]);
  });

  it('a stopped runner (serve --no-runner) creates unleased tasks for another process to claim', async () => {
    const { engine } = await setup(4);
    await engine.stop();
    const { task } = await engine.submit({ owner: OWNER, tool: 'work', args: {}, wire: 'mcp-tasks-ext' });
    expect(task).toMatchObject({ leaseOwner: null, epoch: 0 });
  });

  it('while a claim commits, its batch holds the slots: the submit takes the three-commit path, never past concurrency', async () => {
    files += 1;
    const inner = await openSqliteTaskStore({ path: join(dir, `tasks-${files}.db`) });
    stores.push(inner);
    let running = 0;
    let most = 0;
    const hold = gate();
    const work = tool('work', async () => {
      running += 1;
      most = Math.max(most, running);
      await hold.promise;
      running -= 1;
      return text('ok');
    });
    // A backlog task created by a serving-only node: unleased.
    const idle = engineFor(inner, [work], { nodeId: 'serve-only' });
    const backlog = await idle.submit({ owner: OWNER, tool: 'work', args: { n: 0 }, wire: 'mcp-tasks-ext' });
    expect(backlog.task.leaseOwner).toBeNull();
    // "Oldest" is by creation millisecond (ties go by random id): the fresh task must be younger.
    await until(() => Date.now() > backlog.task.createdAt, 'the next millisecond');
    // This node's first claim waits until a submit has been answered.
    const claimMay = gate();
    const held: TaskStore = { ...inner, claim: async (request) => (await claimMay.promise, inner.claim(request)) };
    const engine = engineFor(held, [work], { concurrency: 1, nodeId: 'node-a', claimIntervalMs: 60_000 });
    engines.push(engine);
    engine.start();
    const fresh = await engine.submit({ owner: OWNER, tool: 'work', args: { n: 1 }, wire: 'mcp-tasks-ext' });
    expect(fresh.task).toMatchObject({ leaseOwner: null, epoch: 0 });
    claimMay.open();
    await untilStatus(inner, backlog.task.id, (t) => t.leaseOwner === 'node-a', 'backlog claimed');
    hold.open();
    // Oldest first, one at a time, each on its first claim.
    await untilStatus(inner, fresh.task.id, (t) => t.status === 'completed', 'fresh done');
    expect(await inner.get(OWNER, backlog.task.id, Date.now())).toMatchObject({ status: 'completed', epoch: 1 });
    expect(await inner.get(OWNER, fresh.task.id, Date.now())).toMatchObject({ epoch: 1 });
    expect(most).toBe(1);
  });
});
