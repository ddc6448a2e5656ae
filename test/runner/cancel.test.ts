import { afterEach, describe, expect, it } from 'vitest';
import { isTerminusError } from '../../src/core/errors.js';
import type { Logger } from '../../src/core/ports.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
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

const engines: TaskEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
  await closeStores();
});

function start(engine: TaskEngine): TaskEngine {
  engines.push(engine);
  engine.start();
  return engine;
}

describe.each(BACKENDS)('cancel ($name)', ({ open }) => {
  it('aborts the local handler at once; a result returned afterwards is kept only as lateOutcome (S4)', async () => {
    const store = await open();
    const started = gate<AbortSignal>();
    const returned = gate();
    // A heartbeat far longer than the test: only the in-process path can abort in time.
    const engine = start(
      engineFor(
        store,
        [
          tool('stubborn', async (_a, ctx) => {
            started.open(ctx.signal);
            await aborted(ctx.signal);
            returned.open();
            return text('finished anyway');
          }),
        ],
        { leaseMs: 60_000, heartbeatMs: 20_000 },
      ),
    );
    const { task } = await engine.submit({ owner: OWNER, tool: 'stubborn', args: {}, wire: 'mcp-tasks-ext' });
    const signal = await started.promise;
    const outcome = await engine.cancel(OWNER, task.id);
    expect(outcome.outcome).toBe('cancelled');
    expect(signal.aborted).toBe(true);
    expect(isTerminusError(signal.reason)).toBe(true);
    await returned.promise;
    const final = await untilStatus(store, task.id, (t) => t.lateOutcome !== null, 'lateOutcome');
    expect(final.status).toBe('cancelled');
    expect(final.result).toBeNull();
    expect(final.lateOutcome).toMatchObject({ epoch: 1, result: text('finished anyway') });
    expect(final.leaseOwner).toBeNull();
    // A second cancel changes nothing.
    expect((await engine.cancel(OWNER, task.id)).outcome).toBe('already_terminal');
  });

  it('writes nothing but a lease release when the handler throws on abort', async () => {
    const store = await open();
    const started = gate();
    const engine = start(
      engineFor(store, [
        tool('polite', async (_a, ctx) => {
          started.open();
          await aborted(ctx.signal);
          ctx.signal.throwIfAborted();
          return text('unreachable');
        }),
      ]),
    );
    const { task } = await engine.submit({ owner: OWNER, tool: 'polite', args: {}, wire: 'mcp-tasks-ext' });
    await started.promise;
    await engine.cancel(OWNER, task.id);
    const final = await untilStatus(store, task.id, (t) => t.leaseOwner === null, 'lease release');
    expect(final.status).toBe('cancelled');
    expect(final.lateOutcome).toBeNull();
    expect(final.result).toBeNull();
  });

  it('reaches a handler on another engine (no shared events) at its next heartbeat', async () => {
    const inner = await open();
    const storeA = nodeStore(inner);
    const started = gate<AbortSignal>();
    const a = start(
      engineFor(storeA, [
        tool('work', async (_a, ctx) => {
          started.open(ctx.signal);
          await aborted(ctx.signal);
          throw ctx.signal.reason;
        }),
      ]),
    );
    // B serves no tools: it is only the node the cancel request happens to arrive at.
    const b = engineFor(inner, []);
    expect(b.events).not.toBe(a.events);
    const { task } = await a.submit({ owner: OWNER, tool: 'work', args: {}, wire: 'mcp-tasks-ext' });
    const signal = await started.promise;
    const beatsBefore = storeA.calls.get('heartbeat') ?? 0;
    let beatsAtAbort = -1;
    signal.addEventListener('abort', () => (beatsAtAbort = storeA.calls.get('heartbeat') ?? 0));
    await b.cancel(OWNER, task.id);
    await until(() => signal.aborted, 'abort on engine A');
    // Seen by the first heartbeat after the cancel (counted when it was sent; its answer aborts).
    expect(beatsAtAbort - beatsBefore).toBeGreaterThanOrEqual(1);
    expect(beatsAtAbort - beatsBefore).toBeLessThanOrEqual(2);
    expect(signal.reason).toMatchObject({ code: 'already_terminal', details: { abort: 'cancelled' } });
    const final = await untilStatus(inner, task.id, (t) => t.leaseOwner === null);
    expect(final.status).toBe('cancelled');
    expect(final.lateOutcome).toBeNull();
  });

  it('a cancel from another engine met by a progress write is an ordinary cancel: no error logged, no stack', async () => {
    const inner = await open();
    const entries: { level: string; message: string; extra: Record<string, unknown> }[] = [];
    const logger = Object.fromEntries(
      (['debug', 'info', 'warn', 'error'] as const).map((level) => [
        level,
        (message: string, extra: Record<string, unknown> = {}) => entries.push({ level, message, extra }),
      ]),
    ) as unknown as Logger;
    const outcomes: string[] = [];
    const started = gate();
    // A heartbeat far longer than the test: the handler's own progress write meets the cancel first.
    const a = start(
      engineFor(
        inner,
        [
          tool('chatty', async (_a, ctx) => {
            started.open();
            for (let i = 0; ; i++) {
              await ctx.progress(i); // rejects once the task is cancelled; the handler lets it through
              await new Promise((resolve) => setTimeout(resolve, 5));
            }
          }),
        ],
        {
          leaseMs: 60_000,
          heartbeatMs: 20_000,
          logger,
          observer: { observe: (e) => void (e.kind === 'run_ended' && outcomes.push(e.outcome)) },
        },
      ),
    );
    const b = engineFor(inner, []);
    const { task } = await a.submit({ owner: OWNER, tool: 'chatty', args: {}, wire: 'mcp-tasks-ext' });
    await started.promise;
    await b.cancel(OWNER, task.id);
    await until(() => outcomes.length > 0, 'the run to end');
    expect(outcomes).toEqual(['cancelled']);
    expect(entries.filter((e) => e.level === 'error' || e.level === 'warn')).toEqual([]);
    expect(entries.some((e) => 'stack' in e.extra)).toBe(false);
    const final = await untilStatus(inner, task.id, (t) => t.leaseOwner === null);
    expect(final.status).toBe('cancelled');
    expect(final.lateOutcome).toBeNull();
  });

  it('reaches the handler through shared events at once, without waiting for a heartbeat', async () => {
    const store = await open();
    const started = gate<AbortSignal>();
    const a = start(
      engineFor(
        store,
        [
          tool('work', async (_a, ctx) => {
            started.open(ctx.signal);
            await aborted(ctx.signal);
            throw ctx.signal.reason;
          }),
        ],
        { leaseMs: 60_000, heartbeatMs: 20_000 },
      ),
    );
    const b = engineFor(store, [], { events: a.events });
    const { task } = await a.submit({ owner: OWNER, tool: 'work', args: {}, wire: 'mcp-tasks-ext' });
    const signal = await started.promise;
    await b.cancel(OWNER, task.id);
    expect(signal.aborted).toBe(true);
  });
});
