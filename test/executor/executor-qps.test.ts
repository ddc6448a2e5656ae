/**
 * C6: the QPS cap is shared by all operations of one executor. Run on a virtual clock against an
 * in-process fake wire, so requests are counted per window of virtual time (no wall-clock asserts),
 * and the same seeds give the same request log (the interpreter is deterministic given its ports).
 */
import { describe, expect, it } from 'vitest';
import type { Random } from '../../src/core/ports.js';
import { createExecutor } from '../../src/executor/executor.js';
import type { Receipt } from '../../src/executor/ledger-port.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import type { ClientWire } from '../../src/executor/wire-port.js';
import { busiest, counterIds, VirtualClock } from './executor-helpers.js';

interface Logged {
  readonly at: number;
  readonly kind: string;
  readonly taskId?: string;
}

function fakeWire(clock: VirtualClock, log: Logged[], pollsToComplete: number): ClientWire {
  const polls = new Map<string, number>();
  let next = 1;
  return {
    wire: 'mcp-tasks-ext',
    version: 'fake/1',
    async submit() {
      const taskId = `task-${next++}`;
      log.push({ at: clock.now(), kind: 'submit', taskId });
      polls.set(taskId, 0);
      return { kind: 'task', taskId, status: 'working', pollIntervalMs: 100 };
    },
    async lookupKey() {
      log.push({ at: clock.now(), kind: 'lookup' });
      return { kind: 'unsupported' };
    },
    async getStatus(taskId) {
      log.push({ at: clock.now(), kind: 'poll', taskId });
      const count = (polls.get(taskId) ?? 0) + 1;
      polls.set(taskId, count);
      return { taskId, status: count >= pollsToComplete ? 'completed' : 'working', pollIntervalMs: 100 };
    },
    async fetchResult(taskId) {
      log.push({ at: clock.now(), kind: 'fetch', taskId });
      return { status: 'completed', result: { content: [{ type: 'text', text: taskId }] } };
    },
    async cancel() {
      log.push({ at: clock.now(), kind: 'cancel' });
      return { kind: 'acked' };
    },
    async sendInput() {
      log.push({ at: clock.now(), kind: 'input' });
    },
    close: async () => undefined,
  };
}

function seeded(seed: number): Random {
  let state = seed >>> 0;
  return {
    next: () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 2 ** 32;
    },
  };
}

async function run(qps: number, operations: number): Promise<{ log: Logged[]; receipts: Receipt[] }> {
  const clock = new VirtualClock();
  const log: Logged[] = [];
  const wire = fakeWire(clock, log, 10);
  const ledger = createMemoryLedger();
  const executor = await createExecutor({
    ledger,
    connect: async () => wire,
    clock,
    random: seeded(7),
    ids: counterIds(),
    qps,
    policy: { minPollIntervalMs: 100 },
  });
  const handles = await Promise.all(
    Array.from({ length: operations }, (_, i) =>
      executor.submit({ callNodeId: `node-${i}`, server: 'fake', tool: 'report', args: { i } }),
    ),
  );
  const receipts: Receipt[] = [];
  for (const handle of handles) void handle.result().then((r) => receipts.push(r));
  for (let step = 0; step < 2_000 && receipts.length < operations; step++) await clock.advance(100);
  await executor.close();
  return { log, receipts };
}

describe('executor-wide QPS cap (C6)', () => {
  it('12 concurrent operations never exceed qps (+ the one-token burst) in any second of virtual time', async () => {
    const { log, receipts } = await run(5, 12);
    expect(receipts).toHaveLength(12);
    expect(new Set(receipts.map((r) => r.callNodeId)).size).toBe(12);
    // 12 x (submit + 10 polls + fetch) requests.
    expect(log).toHaveLength(12 * 12);
    expect(
      busiest(
        log.map((l) => l.at),
        1_000,
      ),
    ).toBeLessThanOrEqual(5 + 1);
    // Over the whole run the rate is the cap, not the demand (12 ops x 10 polls/s would be ~120/s).
    const span = log.at(-1)!.at - log[0]!.at;
    expect(log.length / (span / 1000)).toBeLessThanOrEqual(5 * 1.05 + 1000 / span);
    expect(
      busiest(
        log.map((l) => l.at),
        1_000,
      ),
    ).toBeGreaterThanOrEqual(5);
  });

  it('control: without a cap the same load goes far above it (the assertion above can fail)', async () => {
    const { log, receipts } = await run(Infinity, 12);
    expect(receipts).toHaveLength(12);
    expect(
      busiest(
        log.map((l) => l.at),
        1_000,
      ),
    ).toBeGreaterThan(20);
  });

  it('same seeds, same ports: the same request log', async () => {
    const first = await run(5, 4);
    const second = await run(5, 4);
    expect(second.log).toEqual(first.log);
    expect(second.receipts.map((r) => [r.callNodeId, r.resultDigest])).toEqual(
      first.receipts.map((r) => [r.callNodeId, r.resultDigest]),
    );
  });
});
