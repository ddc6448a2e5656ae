/**
 * Two executors on one SQLite ledger file (two terminals running the same `terminus call`): each
 * has its own connection, as two processes do. Whichever drives the operation, every waiter gets
 * the one receipt and the server holds one task. Before, the executor whose step lost the race
 * (a revision conflict) reloaded the record, found its event no longer applied to the other's
 * state, and was left with nothing armed: its waiter waited for ever (11 of 12 parallel
 * `terminus call`s hung at WORKING by hand). Once it took the record up, a settled one still left
 * its status stream open, and `terminus call` exited 13 (Node's unsettled top-level await).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationHandle } from '../../src/executor/executor-types.js';
import type { Receipt } from '../../src/executor/ledger-port.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { openExecutor, startServer, type TestServer } from './executor-helpers.js';

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startServer();
  dir = await mkdtemp(join(tmpdir(), 'terminus-two-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

let files = 0;
/** The receipt, or the reason it did not come within `ms` (a hang fails the test, it does not stall it). */
function within(ms: number, result: Promise<Receipt>): Promise<Receipt> {
  return Promise.race([
    result,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no receipt within ${ms} ms`)), ms)),
  ]);
}

/** Follows a handle's statuses to the end of the stream (it ends when the operation settles). */
async function lastStatus(handle: OperationHandle): Promise<string | undefined> {
  let state: string | undefined;
  for await (const status of handle.statuses()) state = status.state;
  return state;
}

describe('executors on one ledger file', () => {
  it.each([
    ['two submit at once', 2, 0],
    ['the second submits while the first is working', 2, 300],
    ['six submit 50 ms apart', 6, 50],
  ])(
    '%s: one task, the same receipt for every waiter',
    async (_, count, gapMs) => {
      const path = join(dir, `ledger-${++files}.db`);
      const label = `two-${files}`;
      const opened = await Promise.all(
        Array.from({ length: count }, () => openExecutor(server.url, { ledger: openSqliteLedger({ path }) })),
      );
      try {
        const input = { callNodeId: `n-${files}`, server: 's', tool: 'slow_compute', args: { seconds: 1, label } };
        const results: Promise<Receipt>[] = [];
        for (const { executor } of opened) {
          // As `terminus call` waits: its status stream to its end, then the receipt.
          results.push(
            executor.submit(input).then((h) =>
              within(
                15_000,
                lastStatus(h).then(() => h.result()),
              ),
            ),
          );
          if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
        }
        const receipts = await Promise.all(results);
        expect(receipts[0]!.status).toBe('completed');
        expect(new Set(receipts.map((r) => r.id)).size).toBe(1);
        expect((await server.tasks()).filter((t) => t.args.label === label)).toHaveLength(1);
      } finally {
        for (const { executor, ledger } of opened) {
          await executor.close();
          await ledger.close();
        }
      }
    },
    60_000,
  );
});
