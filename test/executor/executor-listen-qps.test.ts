/**
 * C6 with listening (issue 17 item 2): a read a push brings forward takes a token from the same
 * executor-wide bucket as every other request, and the executor watches each task only while it
 * waits on it. Virtual clock, in-process fake wire whose tasks suggest a 30 s poll interval, so
 * every receipt here within 30 s came from a push.
 */
import { describe, expect, it } from 'vitest';
import { createExecutor } from '../../src/executor/executor.js';
import type { Receipt } from '../../src/executor/ledger-port.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import type { ClientWire, WireStatusAnswer } from '../../src/executor/wire-port.js';
import { busiest, counterIds, midRandom, VirtualClock } from './executor-helpers.js';

const INTERVAL_MS = 30_000;

function pushingWire(clock: VirtualClock, reads: number[]) {
  const done = new Set<string>();
  const hints = new Set<(taskId: string, status: WireStatusAnswer) => void>();
  const watched = new Map<string, number>();
  let next = 1;
  const wire: ClientWire = {
    wire: 'mcp-tasks-ext',
    version: 'fake/1',
    submit: async () => ({ kind: 'task', taskId: `task-${next++}`, status: 'working', pollIntervalMs: INTERVAL_MS }),
    lookupKey: async () => ({ kind: 'unsupported' }),
    getStatus: async (taskId) => {
      reads.push(clock.now());
      return { taskId, status: done.has(taskId) ? 'completed' : 'working', pollIntervalMs: INTERVAL_MS };
    },
    fetchResult: async (taskId) => {
      reads.push(clock.now());
      return { status: 'completed', result: { content: [{ type: 'text', text: taskId }] } };
    },
    cancel: async () => ({ kind: 'acked' }),
    sendInput: async () => undefined,
    onStatusHint: (listener) => {
      hints.add(listener);
      return () => hints.delete(listener);
    },
    watchTask: (taskId) => {
      watched.set(taskId, (watched.get(taskId) ?? 0) + 1);
      return () => watched.set(taskId, (watched.get(taskId) ?? 1) - 1);
    },
    close: async () => undefined,
  };
  const completeAll = (): void => {
    for (let i = 1; i < next; i++) {
      done.add(`task-${i}`);
      for (const hint of hints) hint(`task-${i}`, 'completed');
    }
  };
  const watching = (): number => [...watched.values()].reduce((a, b) => a + b, 0);
  return { wire, completeAll, watching };
}

async function run(qps: number) {
  const clock = new VirtualClock();
  const reads: number[] = [];
  const fake = pushingWire(clock, reads);
  const executor = await createExecutor({
    ledger: createMemoryLedger(),
    connect: async () => fake.wire,
    clock,
    random: midRandom,
    ids: counterIds(),
    qps,
    policy: { minPollIntervalMs: 100 },
  });
  const handles = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      executor.submit({ callNodeId: `n-${i}`, server: 'fake', tool: 'report', args: { i } }),
    ),
  );
  const receipts: Receipt[] = [];
  for (const h of handles) void h.result().then((r) => receipts.push(r));
  await clock.advance(8_000);
  const watchingBefore = fake.watching();
  const pushedAt = clock.now();
  reads.length = 0;
  fake.completeAll();
  for (let step = 0; step < 150 && receipts.length < 10; step++) await clock.advance(100);
  const elapsed = clock.now() - pushedAt;
  await executor.close();
  return { reads, receipts, elapsed, watchingBefore, watchingAfter: fake.watching() };
}

describe('reads brought forward by pushes go through the QPS bucket (C6)', () => {
  it('10 completions pushed at once: 20 reads at no more than qps 2 (+ the burst of one) per second, all receipted by push', async () => {
    const { reads, receipts, elapsed, watchingBefore, watchingAfter } = await run(2);
    expect(receipts).toHaveLength(10);
    expect(elapsed).toBeLessThan(INTERVAL_MS);
    expect(reads).toHaveLength(20);
    expect(busiest(reads, 1_000)).toBeLessThanOrEqual(3);
    // Each task was watched while waited on, and no longer once receipted.
    expect(watchingBefore).toBe(10);
    expect(watchingAfter).toBe(0);
  });

  it('control: without a cap the same pushes put the 20 reads in one burst (the bound above can fail)', async () => {
    const { reads, receipts } = await run(Infinity);
    expect(receipts).toHaveLength(10);
    expect(busiest(reads, 1_000)).toBeGreaterThan(3);
  });
});
