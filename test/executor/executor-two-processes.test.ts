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
import type { Ledger, Receipt } from '../../src/executor/ledger-port.js';
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

/**
 * A ledger on the same file whose acceptance write waits until `release()`: the executor has its
 * result in hand and is about to write the receipt when another executor writes it first.
 */
function holdingAcceptance(ledger: Ledger): { ledger: Ledger; reached: Promise<void>; release(): void } {
  let entered!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (entered = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const held: Ledger = {
    ...ledger,
    acceptTerminal: async (input) => {
      entered();
      await released;
      return ledger.acceptTerminal(input);
    },
  };
  return { ledger: held, reached, release };
}

describe('an executor whose acceptance another executor wrote first (C1)', () => {
  it('hands over the receipt and ends its status stream at the settled state', async () => {
    const path = join(dir, `ledger-${++files}.db`);
    const label = `two-${files}`;
    const input = { callNodeId: `n-${files}`, server: 's', tool: 'slow_compute', args: { seconds: 1, label } };
    const held = holdingAcceptance(openSqliteLedger({ path }));
    const first = await openExecutor(server.url, { ledger: held.ledger });
    const secondLedger = openSqliteLedger({ path });
    let second: Awaited<ReturnType<typeof openExecutor>> | null = null;
    try {
      const handle = await first.executor.submit(input);
      let last: string | undefined;
      const firstReceipt = within(
        15_000,
        (async () => {
          for await (const status of handle.statuses()) last = status.state;
          return handle.result();
        })(),
      );
      // The first has read the result (FETCHING_RESULT in the ledger) and holds its acceptance: the
      // second takes the record up, reads the result itself and writes the receipt.
      await held.reached;
      second = await openExecutor(server.url, { ledger: secondLedger });
      const other = await second.executor.submit(input);
      const receipt = await within(
        15_000,
        lastStatus(other).then(() => other.result()),
      );
      held.release();
      const handedOver = await firstReceipt;
      expect(receipt.status).toBe('completed');
      expect(handedOver.id).toBe(receipt.id);
      expect(last).toBe((await secondLedger.loadByCallNode(input.callNodeId))!.state);
      expect((await server.tasks()).filter((t) => t.args.label === label)).toHaveLength(1);
    } finally {
      held.release();
      await first.executor.close();
      await second?.executor.close();
      await first.ledger.close();
      await secondLedger.close();
    }
  }, 60_000);
});
