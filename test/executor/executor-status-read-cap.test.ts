/**
 * C6, the per-operation status read cap where the reads leave (gate seeds 28084, 29927, 82675): a
 * push whose status differs from the last read brings a read forward to now, and each read's answer
 * arms its own cadence, so pushes 50 ms apart drove one read each. Every status read (poll, pushed,
 * result read) now waits for the operation's one-second window: at most `1000 / minPollIntervalMs + 1`
 * (5 at the 250 ms floor). Virtual clock, in-process fake wire whose task suggests a 30 s interval.
 */
import { describe, expect, it } from 'vitest';
import { createExecutor } from '../../src/executor/executor.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { DEFAULT_POLICY } from '../../src/executor/operation.js';
import { statusReadCap, statusReadOpensAt } from '../../src/executor/schedule.js';
import type { ClientWire, WireStatusAnswer } from '../../src/executor/wire-port.js';
import { busiest, counterIds, midRandom, VirtualClock } from './executor-helpers.js';

/**
 * A fake Tasks-extension wire: one task whose server suggests a 30 s interval, every status and
 * result read timed into `reads`, status hints delivered to whoever listens in `hints`.
 */
function pushingWire(
  clock: VirtualClock,
  reads: number[],
  hints: Set<(taskId: string, status: WireStatusAnswer) => void>,
  done: () => boolean,
): ClientWire {
  return {
    wire: 'mcp-tasks-ext',
    version: 'fake/1',
    submit: async () => ({ kind: 'task', taskId: 'task-1', status: 'working', pollIntervalMs: 30_000 }),
    lookupKey: async () => ({ kind: 'unsupported' }),
    getStatus: async (taskId) => {
      reads.push(clock.now());
      return { taskId, status: done() ? 'completed' : 'working', pollIntervalMs: 30_000 };
    },
    fetchResult: async () => {
      reads.push(clock.now());
      return { status: 'completed', result: { content: [{ type: 'text', text: 'ok' }] } };
    },
    cancel: async () => ({ kind: 'acked' }),
    sendInput: async () => undefined,
    onStatusHint: (listener) => {
      hints.add(listener);
      return () => hints.delete(listener);
    },
    watchTask: () => () => undefined,
    close: async () => undefined,
  };
}

describe('status read cap per operation (C6)', () => {
  it('pushes every 50 ms whose status differs from the read: at most 5 status reads in any second, then the receipt', async () => {
    const clock = new VirtualClock();
    const reads: number[] = [];
    let done = false;
    const hints = new Set<(taskId: string, status: WireStatusAnswer) => void>();
    const wire = pushingWire(clock, reads, hints, () => done);
    const executor = await createExecutor({
      ledger: createMemoryLedger(),
      connect: async () => wire,
      clock,
      random: midRandom,
      ids: counterIds(),
      qps: Infinity,
    });
    const handle = await executor.submit({ callNodeId: 'n-1', server: 'fake', tool: 'report', args: {} });
    let receipt: unknown = null;
    void handle.result().then((r) => (receipt = r));
    await clock.advance(100);
    // A replayed hint: news against every read (the read says working), 20 per second for 3 s.
    for (let i = 0; i < 60; i++) {
      for (const hint of hints) hint('task-1', 'input_required');
      await clock.advance(50);
    }
    done = true;
    for (const hint of hints) hint('task-1', 'completed');
    for (let i = 0; i < 40 && receipt === null; i++) await clock.advance(100);
    await executor.close();
    expect(receipt).not.toBeNull();
    expect(reads.length).toBeGreaterThan(statusReadCap(DEFAULT_POLICY));
    expect(busiest(reads, 1_000)).toBeLessThanOrEqual(statusReadCap(DEFAULT_POLICY));
  });

  it("an executor that takes the operation up after a crash counts the dead one's window as full (gate seed 467954)", async () => {
    const reads: number[] = [];
    const hints = new Set<(taskId: string, status: WireStatusAnswer) => void>();
    const ledger = createMemoryLedger();
    const wireOn = (clock: VirtualClock): ClientWire => pushingWire(clock, reads, hints, () => false);
    const open = (clock: VirtualClock) =>
      createExecutor({
        ledger,
        connect: async () => wireOn(clock),
        clock,
        random: midRandom,
        ids: counterIds(),
        qps: Infinity,
      });
    // The first executor reads as often as the cap lets it (pushes every 50 ms), then dies: it is
    // never advanced again, and its clock stops with it.
    const first = new VirtualClock();
    const dying = await open(first);
    const handle = await dying.submit({ callNodeId: 'n-1', server: 'fake', tool: 'report', args: {} });
    void handle.result().catch(() => undefined);
    for (let i = 0; i < 40 && reads.length < statusReadCap(DEFAULT_POLICY); i++) {
      for (const hint of hints) hint('task-1', 'input_required');
      await first.advance(50);
    }
    const before = reads.length;
    expect(busiest(reads, 1_000)).toBe(statusReadCap(DEFAULT_POLICY));
    hints.clear();
    // 74 ms later a new executor on the same ledger takes it up and keeps reading.
    const second = new VirtualClock(first.now() + 74);
    const next = await open(second);
    const resumed = await next.attach('n-1');
    void resumed?.result().catch(() => undefined);
    for (let i = 0; i < 40; i++) {
      for (const hint of hints) hint('task-1', 'input_required');
      await second.advance(50);
    }
    await next.close();
    expect(reads.length).toBeGreaterThan(before);
    expect(busiest(reads, 1_000)).toBeLessThanOrEqual(statusReadCap(DEFAULT_POLICY));
  });

  it('the window: free below the cap, else one second after the oldest of the last cap reads', () => {
    expect(statusReadCap(DEFAULT_POLICY)).toBe(5);
    expect(statusReadOpensAt([0, 10, 20, 30], 40, 5)).toBe(40);
    expect(statusReadOpensAt([0, 10, 20, 30, 40], 50, 5)).toBe(1_000);
    expect(statusReadOpensAt([0, 10, 20, 30, 40, 1_000], 1_005, 5)).toBe(1_010);
    expect(statusReadOpensAt([0, 10, 20, 30, 40], 2_000, 5)).toBe(2_000);
  });
});
