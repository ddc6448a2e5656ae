/**
 * C11 (issue 11, defect 2) against a server no one here wrote: the SDK 1.32 task server over stdio
 * (test/fixtures/sdk132-tasks-server.ts). A waiter gives up on a 300 ms budget, the server completes
 * the task on its own, and a later `resume({ budgetMs })` of the same executor reaches the one receipt
 * (the process is the same: that server's tasks live in its memory).
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { ROOT, tsNode } from '../cli/helpers.js';

describe('C11 against the SDK 1.32 task server', () => {
  it('a waiter that gave up is followed by resume() with a fresh budget, which reaches the receipt', async () => {
    const ledger = createMemoryLedger();
    const executor = await createExecutor({
      ledger,
      connect: () =>
        connectServer(
          {
            command: process.execPath,
            args: tsNode(join(ROOT, 'test/fixtures/sdk132-tasks-server.ts')),
            stderr: 'ignore',
          },
          { clock: systemClock, timeoutMs: 20_000 },
        ),
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
    });
    try {
      const op = await executor.submit({
        callNodeId: 'c11-sdk',
        server: 'f',
        tool: 'sdk_complete',
        args: { ms: 1_500, text: 'finished alone' },
        budgetMs: 300,
      });
      await expect(op.result()).rejects.toMatchObject({ code: 'waiting_stopped' });
      expect((await ledger.loadByCallNode('c11-sdk'))?.state).toBe('WORKING');
      // The task finishes on the server while nobody waits (1.5 s of work).
      await sleep(2_500);
      const [again] = await executor.resume({ budgetMs: 15_000 });
      expect(again?.attached).toBe(true);
      const receipt = await again!.result();
      expect(receipt.status).toBe('completed');
      expect(JSON.stringify(receipt.payload)).toContain('finished alone');
      expect(await ledger.listOutbox(10)).toHaveLength(1);
    } finally {
      await executor.close();
    }
  }, 60_000);
});
