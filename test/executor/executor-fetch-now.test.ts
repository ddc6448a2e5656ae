/**
 * Figure 3: after a terminal status is recorded (TERMINAL_OBSERVED, durable for C13) the result
 * fetch is the operation's next step, not a 0 ms timer away (that timer hop cost 2.8-6.3 ms of the
 * 26-34 ms push-to-receipt at load 14). Run on a virtual clock whose sleeps are logged beside the
 * requests of an in-process fake wire, so the order is exact and nothing is timed. The fetch is still
 * a second read after the status read (C13 compares them). A wake inside a Retry-After is never due
 * now (`immediate` ends at `notBefore`, C6: test/executor/machine-throttle.test.ts), so it keeps its timer.
 */
import { describe, expect, it } from 'vitest';
import { createExecutor } from '../../src/executor/executor.js';
import type { Receipt } from '../../src/executor/ledger-port.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import type { ClientWire } from '../../src/executor/wire-port.js';
import { VirtualClock } from './executor-helpers.js';

class LoggedClock extends VirtualClock {
  constructor(private readonly log: string[]) {
    super();
  }

  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.log.push(`sleep ${ms}`);
    return super.sleep(ms, signal);
  }
}

function fakeWire(log: string[]): ClientWire {
  let polls = 0;
  return {
    wire: 'mcp-tasks-ext',
    version: 'fake/1',
    async submit() {
      log.push('submit');
      return { kind: 'task', taskId: 'task-1', status: 'working', pollIntervalMs: 100 };
    },
    async lookupKey() {
      log.push('lookup');
      return { kind: 'unsupported' };
    },
    async getStatus(taskId) {
      log.push('poll');
      polls++;
      return { taskId, status: polls >= 2 ? 'completed' : 'working', pollIntervalMs: 100 };
    },
    async fetchResult() {
      log.push('fetch');
      return { status: 'completed', result: { content: [{ type: 'text', text: 'done' }] } };
    },
    async cancel() {
      log.push('cancel');
      return { kind: 'acked' };
    },
    async sendInput() {
      log.push('input');
    },
    close: async () => undefined,
  };
}

describe('figure 3: the fetch after a terminal status', () => {
  it('leaves in the step after TERMINAL_OBSERVED is recorded, with no timer between; the receipt follows', async () => {
    const log: string[] = [];
    const clock = new LoggedClock(log);
    const ledger = createMemoryLedger();
    const executor = await createExecutor({
      ledger,
      connect: async () => fakeWire(log),
      clock,
      random: { next: () => 0.5 },
      ids: { taskId: () => 'tid', unique: (prefix) => `${prefix}_1` },
      qps: Infinity,
      policy: { minPollIntervalMs: 100 },
    });
    const handle = await executor.submit({ callNodeId: 'node-1', server: 'fake', tool: 'report', args: {} });
    let receipt: Receipt | null = null;
    void handle.result().then((r) => (receipt = r));
    for (let i = 0; i < 20 && receipt === null; i++) await clock.advance(100);
    await executor.close();

    expect(receipt).toMatchObject({ status: 'completed' });
    const completedRead = log.lastIndexOf('poll');
    // Before: ['poll', 'sleep 0', 'fetch'] (an immediate wake armed as a timer).
    expect(log.slice(completedRead)).toEqual(['poll', 'fetch']);
    const op = await ledger.load(handle.operationId);
    expect(op?.history.map((h) => h.to)).toEqual(['WORKING', 'TERMINAL_OBSERVED', 'FETCHING_RESULT', 'ACCEPTED']);
  });
});
