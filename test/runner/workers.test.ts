import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/core/ports.js';
import { systemClock, systemIds } from '../../src/core/system.js';
import type { TaskRecord } from '../../src/core/task.js';
import { createEngine, type EngineOptions } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import type { LifecycleEvent } from '../../src/runner/observer.js';
import type { WorkersOptions } from '../../src/runner/workers/pool.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { readEffects, tools, type Effect } from './fixtures/worker-tools.js';

// Issue 14 item 5: task handlers in worker processes behave as they do in the serving thread. The
// same cases run in both modes on a real SQLite file; what a handler saw comes back through the
// store or the effects file its module writes, since a worker shares no variable with us.
// Issue 30: a hostile handler (a heap bomb, a spinner that ignores its signal, a flood) ends only
// its own run, and the engine keeps serving.

const OWNER = 'alice';
const MODULE = new URL('./fixtures/worker-tools.ts', import.meta.url);

interface Entry {
  readonly level: string;
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

let dir = '';
let store: TaskStore;
let entries: Entry[] = [];
let events: LifecycleEvent[] = [];
const engines: TaskEngine[] = [];

const logger: Logger = {
  debug: (message, fields = {}) => entries.push({ level: 'debug', message, fields }),
  info: (message, fields = {}) => entries.push({ level: 'info', message, fields }),
  warn: (message, fields = {}) => entries.push({ level: 'warn', message, fields }),
  error: (message, fields = {}) => entries.push({ level: 'error', message, fields }),
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-workers-'));
  store = await openSqliteTaskStore({ path: join(dir, 'tasks.db') });
  entries = [];
  events = [];
});

afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.stop()));
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function workers(extra: Partial<WorkersOptions> = {}): WorkersOptions {
  return { count: 2, module: MODULE, data: { dir }, heapMb: 128, ...extra };
}

function start(options: Partial<EngineOptions> = {}): TaskEngine {
  const engine = createEngine({
    store,
    tools: tools({ dir }),
    clock: systemClock,
    ids: systemIds,
    logger,
    nodeId: 'node-a',
    leaseMs: 3000,
    heartbeatMs: 100,
    claimIntervalMs: 20,
    observer: { observe: (event) => events.push(event) },
    ...options,
  });
  engine.start();
  engines.push(engine);
  return engine;
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 25_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function submit(engine: TaskEngine, tool: string, args: Record<string, unknown>): Promise<string> {
  const { task } = await engine.submit({ owner: OWNER, tool, args, wire: 'mcp-tasks-ext' });
  return task.id;
}

async function settled(id: string): Promise<TaskRecord> {
  return until(`${id} terminal`, async () => {
    const task = await store.get(OWNER, id, systemClock.now());
    return task !== null && ['completed', 'failed', 'cancelled'].includes(task.status) ? task : undefined;
  });
}

const effect = (id: string, kind: string, epoch = 1): Promise<Effect> =>
  until(`${kind} of ${id} at epoch ${epoch}`, () =>
    readEffects(dir).find((e) => e.taskId === id && e.kind === kind && e.epoch === epoch),
  );

const MODES = [
  { mode: 'in the serving thread', options: (): Partial<EngineOptions> => ({}), inWorker: false },
  { mode: 'in worker processes', options: (): Partial<EngineOptions> => ({ workers: workers() }), inWorker: true },
] as const;

describe.each(MODES)('task handlers $mode', ({ options, inWorker }) => {
  it('progress, checkpoints, logger lines and a result checked against the outputSchema', async () => {
    const engine = start(options());
    const id = await submit(engine, 'steps', { steps: 3 });
    const task = await settled(id);
    expect(task.status).toBe('completed');
    const result = task.result as { structuredContent: Effect & { resumedFrom: number } };
    expect(result.structuredContent).toMatchObject({ epoch: 1, attempt: 1, resumedFrom: 0 });
    // Where it ran: the handler's own process id came back in its result.
    if (inWorker) expect(result.structuredContent.pid).not.toBe(process.pid);
    else expect(result.structuredContent.pid).toBe(process.pid);
    expect(task.progress).toEqual({ done: 3, total: 3, message: 'step 3' });
    expect(task.checkpoint).toEqual({ next: 3 });
    const steps = entries.filter((e) => e.message === 'step done');
    expect(steps.map((e) => e.fields)).toEqual(
      [0, 1, 2].map((step) => ({ taskId: id, epoch: 1, tool: 'steps', step })),
    );
  });

  it('an exception is a tool error, logged with task id, epoch and the stack; a ToolRpcError fails the task', async () => {
    const engine = start(options());
    const thrown = await submit(engine, 'steps', { steps: 1, end: 'throw' });
    const rpc = await submit(engine, 'steps', { steps: 1, end: 'rpc' });
    const a = await settled(thrown);
    expect(a.status).toBe('completed');
    expect(a.result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'boom at epoch 1' }] });
    const logged = entries.find((e) => e.message === 'tool handler threw');
    expect(logged?.level).toBe('error');
    expect(logged?.fields).toMatchObject({ taskId: thrown, epoch: 1, tool: 'steps', error: 'boom at epoch 1' });
    expect(String(logged?.fields['stack'])).toContain('worker-tools.ts');
    const b = await settled(rpc);
    expect(b.status).toBe('failed');
    expect(b.error).toEqual({ code: -32010, message: 'backend refused', data: { backend: 'billing' } });
    expect(entries.find((e) => e.message.includes('JSON-RPC error'))?.fields).toMatchObject({ taskId: rpc, epoch: 1 });
  });

  it('a durable input request: input_required until the reply, then the handler gets it', async () => {
    const engine = start(options());
    const id = await submit(engine, 'ask', { question: 'Which region?' });
    const waiting = await until('input_required', async () => {
      const task = await store.get(OWNER, id, systemClock.now());
      return task?.status === 'input_required' ? task : undefined;
    });
    const [key] = Object.keys(waiting.inputRequests);
    expect(waiting.inputRequests[key!]).toMatchObject({ params: { message: 'Which region?' } });
    await engine.respond(OWNER, id, { [key!]: { action: 'accept', content: { answer: 'eu-west' } } });
    const task = await settled(id);
    expect(task.result).toMatchObject({ content: [{ type: 'text', text: 'eu-west' }] });
  });

  it('a cancel aborts the handler’s signal with the cancelled reason (a TerminusError); the task stays cancelled', async () => {
    const engine = start(options());
    const id = await submit(engine, 'hold', {});
    await effect(id, 'started');
    expect((await engine.cancel(OWNER, id)).outcome).toBe('cancelled');
    const aborted = await effect(id, 'aborted');
    expect(aborted).toMatchObject({ code: 'already_terminal', abort: 'cancelled', isTerminus: true });
    expect((await settled(id)).status).toBe('cancelled');
  });

  it('a stopping node aborts with the shutdown reason and releases; the next node runs epoch 2 from the checkpoint', async () => {
    const first = start(options());
    const id = await submit(first, 'hold', {});
    await effect(id, 'started');
    await first.stop();
    expect(await effect(id, 'aborted')).toMatchObject({ abort: 'shutdown', code: 'unavailable' });
    const released = await store.get(OWNER, id, systemClock.now());
    expect(released).toMatchObject({ status: 'working', leaseOwner: null, epoch: 1 });
    start({ ...options(), nodeId: 'node-b' });
    const again = await effect(id, 'started', 2);
    expect(again).toMatchObject({ attempt: 2, lastCheckpoint: { heldAt: 1 } });
  });

  it('a write from a stale epoch is refused with lease_lost and aborts the handler (S3)', async () => {
    // One slot, held by the run: this node cannot claim the released task back itself.
    const engine = start({ ...options(), concurrency: 1 });
    const id = await submit(engine, 'fenced', {});
    await effect(id, 'started');
    // Another node takes the task over: epoch 2 is the thief's, every write of epoch 1 is stale.
    // Both writes queued in one tick, so no claim of this node's runner can come between them.
    const [, [stolen]] = await Promise.all([
      store.release({ taskId: id, workerId: 'node-a', epoch: 1 }, systemClock.now()),
      store.claim({ workerId: 'thief', now: systemClock.now(), leaseMs: 60_000, limit: 1, tools: ['fenced'] }),
    ]);
    expect(stolen).toMatchObject({ id, epoch: 2 });
    const refused = await effect(id, 'refused');
    expect(refused).toMatchObject({ code: 'lease_lost', aborted: true, abort: 'lease_lost' });
    const task = await store.get(OWNER, id, systemClock.now());
    expect(task).toMatchObject({ status: 'working', epoch: 2, leaseOwner: 'thief' });
    expect((task?.checkpoint as { n: number }).n).toBeGreaterThanOrEqual(0);
  });

  it('progress with NaN is refused as invalid_argument, as a TerminusError the handler can read', async () => {
    const engine = start(options());
    const task = await settled(await submit(engine, 'bad_progress', {}));
    expect(task.result).toMatchObject({ content: [{ type: 'text', text: 'invalid_argument' }] });
  });

  it('ctx.log and ctx.output reach the task log, in order, marked with the epoch (issue 18)', async () => {
    const engine = start(options());
    const id = await submit(engine, 'logs', {});
    expect((await settled(id)).status).toBe('completed');
    const page = await engine.readLog(OWNER, id, {});
    expect(page.lines.map(({ seq, epoch, stream, text, fields }) => ({ seq, epoch, stream, text, fields }))).toEqual([
      { seq: 1, epoch: 1, stream: 'log', text: 'first', fields: { n: 1 } },
      { seq: 2, epoch: 1, stream: 'output', text: 'partial result', fields: undefined },
      { seq: 3, epoch: 1, stream: 'log', text: 'last', fields: undefined },
    ]);
  });
});

describe('task handlers in worker processes only', () => {
  it('a handler that holds its event loop leaves the serving thread free: reads answer and the lease is extended meanwhile', async () => {
    const engine = start({ workers: workers() });
    const id = await submit(engine, 'spin', {});
    const spinning = await effect(id, 'spinning');
    expect(spinning.pid).not.toBe(process.pid);
    const first = (await engine.get(OWNER, id)).leaseExpiresAt ?? 0;
    // Heartbeats run here while the handler spins there: in this thread they could not.
    const later = await until('a heartbeat', async () => {
      const lease = (await engine.get(OWNER, id)).leaseExpiresAt ?? 0;
      return lease > first ? lease : undefined;
    });
    expect(later).toBeGreaterThan(first);
    writeFileSync(join(dir, 'release'), '');
    expect((await settled(id)).result).toMatchObject({ content: [{ type: 'text', text: 'released' }] });
  });

  it.each(['exit', 'throw'] as const)(
    'a worker that dies (%s) re-runs only its task at epoch 2 from its checkpoint; the other worker’s task goes on',
    async (how) => {
      const engine = start({ workers: workers() });
      const other = await submit(engine, 'hold', {});
      await effect(other, 'started');
      const id = await submit(engine, 'steps', { steps: 3, crash: { attempt: 1, afterStep: 0, how } });
      const task = await settled(id);
      expect(task.status).toBe('completed');
      expect(task.result).toMatchObject({ structuredContent: { epoch: 2, attempt: 2, resumedFrom: 1 } });
      const died = entries.find((e) => e.message.startsWith('the handler worker died'));
      expect(died?.fields).toMatchObject({ taskId: id, epoch: 1, tool: 'steps' });
      if (how === 'throw') expect(String(died?.fields['reason'])).toContain('uncaught Error: uncaught in a timer');
      if (how === 'exit') expect(String(died?.fields['reason'])).toBe('the worker process exited with code 3');
      // The other task never noticed: still epoch 1 in its first worker, and it still hears a cancel.
      const held = readEffects(dir).filter((e) => e.taskId === other);
      expect(held.map((e) => [e.kind, e.epoch])).toEqual([['started', 1]]);
      await engine.cancel(OWNER, other);
      expect(await effect(other, 'aborted')).toMatchObject({ abort: 'cancelled' });
      // The engine still serves and runs: a new task completes on a replacement worker.
      const after = await settled(await submit(engine, 'steps', { steps: 1 }));
      expect(after.status).toBe('completed');
    },
  );

  it('a handler that kills its worker every time fails after maxAttempts runs, like one that crashes its process', async () => {
    const engine = start({ workers: workers(), maxAttempts: 2 });
    const id = await submit(engine, 'steps', { steps: 2, crash: { afterStep: 0, how: 'exit' } });
    const task = await settled(id);
    expect(task.status).toBe('failed');
    expect(task.error?.message).toBe('the task ran 2 times (maxAttempts 2) without recording an outcome');
    expect(
      readEffects(dir)
        .filter((e) => e.taskId === id)
        .map((e) => e.epoch),
    ).toEqual([1, 2]);
  });

  it('a worker that dies idle (a timer its handler left behind) is logged and replaced when needed', async () => {
    const engine = start({ workers: workers() });
    const left = await settled(await submit(engine, 'leave_behind', {}));
    expect(left.status).toBe('completed');
    const said = await until('the idle death', () =>
      entries.find((e) => e.message.startsWith('an idle handler worker died')),
    );
    expect(String(said.fields['reason'])).toContain('left behind');
    const next = await Promise.all([submit(engine, 'steps', { steps: 1 }), submit(engine, 'steps', { steps: 1 })]);
    for (const id of next) expect((await settled(id)).status).toBe('completed');
  });

  it('workers.nice renices the worker processes only, not the serving process', async () => {
    const before = getPriority();
    const engine = start({ workers: workers({ nice: Math.min(19, before + 5) }) });
    const task = await settled(await submit(engine, 'priority', {}));
    expect(task.result).toMatchObject({ content: [{ text: String(Math.min(19, before + 5)) }] });
    expect(getPriority()).toBe(before);
  });

  it('a result structured clone refuses (a function in it) ends the task as a tool error saying so', async () => {
    const engine = start({ workers: workers() });
    const task = await settled(await submit(engine, 'unclonable', {}));
    expect(task.status).toBe('completed');
    const result = task.result as { isError: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toContain('cannot leave its worker process (structured clone)');
  });

  it('a result over maxMessageBytes is refused in the worker: a tool error saying so, nothing copied here', async () => {
    const engine = start({ workers: workers({ maxMessageBytes: 1024 * 1024 }) });
    const task = await settled(await submit(engine, 'big_result', { mb: 2 }));
    const result = task.result as { isError: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(
      /^the handler's result is \d+ bytes \(v8-serialised\), over the 1048576 bytes/,
    );
  });

  it('a tools module without a served tool: the node claims nothing and says why', async () => {
    const engine = start({ workers: workers({ export: 'nothing' }) });
    const id = await submit(engine, 'steps', { steps: 1 });
    const said = await until('the error line', () =>
      entries.find((e) => e.message.startsWith('handler workers did not start')),
    );
    expect(String(said.fields['error'])).toContain('has no export nothing');
    expect(await engine.get(OWNER, id)).toMatchObject({ status: 'working', epoch: 0, leaseOwner: null });
  });
});

describe('createTerminus with handler workers', () => {
  it('one more line, engine.workers, runs the same tools in worker processes', async () => {
    const { createTerminus } = await import('../../src/server/create-terminus.js');
    const terminus = await createTerminus({
      db: join(dir, 'library.db'),
      tools: tools({ dir }),
      logger,
      engine: { workers: { count: 1, module: MODULE, data: { dir } } },
    });
    try {
      const { task } = await terminus.engine.submit({
        owner: OWNER,
        tool: 'steps',
        args: { steps: 2 },
        wire: 'mcp-tasks-ext',
      });
      const done = await until('the library task', async () => {
        const seen = await terminus.engine.get(OWNER, task.id);
        return seen.status === 'completed' ? seen : undefined;
      });
      const result = done.result as { structuredContent: { pid: number } };
      expect(result.structuredContent.pid).not.toBe(process.pid);
    } finally {
      await terminus.close();
    }
  });
});
