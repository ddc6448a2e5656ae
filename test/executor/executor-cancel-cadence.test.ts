/**
 * Issue 11, defect 7: after a cancel, the executor confirms it on a short cadence of its own (at
 * most 1 s, bounded by the per-operation floor and Retry-After, C6), not at the server's next
 * `pollIntervalMs` (30 s here). Against our server over HTTP (the Tasks extension's cancel ack is
 * empty, so only a status read confirms it) and the SDK 1.32 task server over stdio with the same
 * 30 s interval (its `tasks/cancel` answer already shows `cancelled`, T-64).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import type { Receipt } from '../../src/executor/ledger-port.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { ROOT, tsNode } from '../cli/helpers.js';
import { openExecutor, startProxy, startServer, waitFor, type TestServer } from './executor-helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

/** The receipt, or a failure after `ms`: a third of the server's 30 s interval. */
function within(result: Promise<Receipt>, ms: number): Promise<Receipt> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no receipt within ${ms} ms of the cancel`)), ms);
  });
  return Promise.race([result, late]).finally(() => clearTimeout(timer));
}

describe('cancel confirmation does not wait for the server poll interval', () => {
  it('our server, 30 s interval: the status read after the ack is due within ~1 s, and confirms', async () => {
    const proxy = await startProxy(server.url, () => ({ kind: 'forward' }));
    // The real default policy (250 ms floor), not the helper's fast test policy.
    const { executor, ledger } = await openExecutor(proxy.url, { policy: {} });
    try {
      const op = await executor.submit({
        callNodeId: 'cc-ours',
        server: 's',
        tool: 'patient_job',
        args: { ms: 60_000 },
      });
      await waitFor(async () => (await ledger.loadByCallNode('cc-ours'))?.state === 'WORKING', 'WORKING');
      const working = (await ledger.loadByCallNode('cc-ours'))!;
      expect(working.pollIntervalMs).toBe(30_000);
      // Before the cancel the server's cadence holds: the first read is ~30 s after the ack (C6).
      expect(working.wakeAt! - working.updatedAt).toBeGreaterThanOrEqual(30_000);
      expect((await op.cancel()).requested).toBe(true);
      await waitFor(async () => (await ledger.loadByCallNode('cc-ours'))!.cancelAckedGeneration === 1, 'the ack');
      const acked = (await ledger.loadByCallNode('cc-ours'))!;
      if (acked.state === 'CANCEL_REQUESTED') expect(acked.wakeAt! - acked.updatedAt).toBeLessThanOrEqual(1_100);
      const receipt = await within(op.result(), 10_000);
      expect(receipt.status).toBe('cancelled');
      expect(proxy.seen.filter((r) => r.method === 'tasks/cancel')).toHaveLength(1);
    } finally {
      await executor.close();
      await proxy.close();
    }
  });

  it('SDK 1.32 task server over stdio, 30 s interval: the cancel is confirmed without waiting it out', async () => {
    const executor = await createExecutor({
      ledger: createMemoryLedger(),
      connect: () =>
        connectServer(
          {
            command: process.execPath,
            args: tsNode(join(ROOT, 'test/fixtures/sdk132-tasks-server.ts')),
            env: { ...(process.env as Record<string, string>), FIXTURE_POLL_MS: '30000' },
            stderr: 'ignore',
          },
          { clock: systemClock, timeoutMs: 20_000 },
        ),
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
    });
    try {
      const op = await executor.submit({ callNodeId: 'cc-sdk', server: 'f', tool: 'sdk_slow', args: { seconds: 60 } });
      const seen: string[] = [];
      const statuses = (async () => {
        for await (const s of op.statuses()) seen.push(s.state);
      })();
      await waitFor(() => seen.includes('WORKING'), 'WORKING', 30_000);
      expect((await op.cancel()).requested).toBe(true);
      expect((await within(op.result(), 10_000)).status).toBe('cancelled');
      await statuses;
    } finally {
      await executor.close();
    }
  }, 60_000);
});
