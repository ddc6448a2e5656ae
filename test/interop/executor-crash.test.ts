/**
 * The executor killed with SIGKILL at each risky point, then `resume()` in a new process: exactly one
 * receipt per call node every time, and never a second task on the server (C1, C5, S5/S6).
 * The executor is a real process (test/fixtures/crash-driver.ts) on a SQLite ledger file, talking to
 * `terminus serve` over HTTP; the server's SQLite file is read to count the tasks it created.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, ROOT, start, startServe, tempDir, tsNode, type Ran, type Served } from '../cli/helpers.js';

const SLOW = 180_000;
const DRIVER = join(ROOT, 'test/fixtures/crash-driver.ts');
const dir = tempDir('terminus-crash-');
let served: Served;

beforeAll(async () => {
  served = await startServe(dir.path);
}, SLOW);
afterAll(async () => {
  await served.stop();
  killAll();
  dir.remove();
});

type Fact = Record<string, unknown> & { event: string };
const facts = (ran: Ran): Fact[] =>
  ran.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Fact);

function driver(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return start(tsNode(DRIVER, ...args), { cwd: dir.path, input: '', env }).done;
}

/** Tasks the server ever created for this report title (the args are stored as JSON). */
function serverTasks(title: string): number {
  const db = new Database(served.db, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare("SELECT count(*) AS n FROM tasks WHERE json_extract(args, '$.title') = ?").get(title) as {
      n: number;
    };
    return row.n;
  } finally {
    db.close();
  }
}

function ledgerRows(file: string, callNodeId: string): { receipts: number; outbox: number; operations: number } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const count = (sql: string): number => (db.prepare(sql).get(callNodeId) as { n: number }).n;
    return {
      receipts: count('SELECT count(*) AS n FROM receipts WHERE call_node_id = ?'),
      outbox: count('SELECT count(*) AS n FROM outbox WHERE call_node_id = ?'),
      operations: count('SELECT count(*) AS n FROM operations WHERE call_node_id = ?'),
    };
  } finally {
    db.close();
  }
}

const POINTS = ['before_send', 'after_send', 'polling', 'before_accept', 'after_accept'] as const;

describe('executor kill -9, then resume() in a new process', () => {
  for (const point of POINTS) {
    it(
      `${point}: one receipt for the call node, one task on the server`,
      async () => {
        const ledger = join(dir.path, `${point}.db`);
        const title = `crash-${point}`;
        const callNode = `node-${point}`;
        // Polling needs a second status answer while the task still works: sections outlast two intervals.
        const args = JSON.stringify({ title, sections: 3, sectionSeconds: point === 'polling' ? 1 : 0.3 });

        const crashed = await driver(['submit', ledger, served.url, callNode, 'build_report', args], {
          CRASH_AT: point,
        });
        expect(crashed.signal).toBe('SIGKILL');
        expect(facts(crashed)).toContainEqual({ event: 'crash', point });
        expect(facts(crashed).some((f) => f.event === 'receipt')).toBe(false);
        if (point === 'after_accept') expect(ledgerRows(ledger, callNode).receipts).toBe(1);
        else expect(ledgerRows(ledger, callNode).receipts).toBe(0);

        const resumed = await driver(['resume', ledger]);
        expect(resumed.code, resumed.stderr).toBe(0);
        const out = facts(resumed);
        // after_accept left nothing in flight: the receipt was committed before the crash.
        expect(out).toContainEqual({ event: 'resumed', count: point === 'after_accept' ? 0 : 1 });
        if (point !== 'after_accept') {
          expect(out).toContainEqual(
            expect.objectContaining({ event: 'receipt', callNodeId: callNode, status: 'completed' }),
          );
        }

        expect(ledgerRows(ledger, callNode)).toEqual({ receipts: 1, outbox: 1, operations: 1 });
        expect(serverTasks(title)).toBe(1);

        // A second restart finds nothing to do and changes nothing.
        const again = await driver(['resume', ledger]);
        expect(facts(again)).toContainEqual({ event: 'resumed', count: 0 });
        expect(ledgerRows(ledger, callNode)).toEqual({ receipts: 1, outbox: 1, operations: 1 });
        expect(serverTasks(title)).toBe(1);
      },
      SLOW,
    );
  }

  it(
    'a retried submit of the same call node after a crash is the same operation (C5)',
    async () => {
      const ledger = join(dir.path, 'retry.db');
      const title = 'crash-retry';
      const args = JSON.stringify({ title, sections: 2, sectionSeconds: 0.2 });
      const crashed = await driver(['submit', ledger, served.url, 'node-retry', 'build_report', args], {
        CRASH_AT: 'after_send',
      });
      expect(crashed.signal).toBe('SIGKILL');
      // The host retries the whole call instead of resuming: same call node, same request.
      const retried = await driver(['submit', ledger, served.url, 'node-retry', 'build_report', args]);
      expect(retried.code, retried.stderr).toBe(0);
      expect(facts(retried)).toContainEqual(expect.objectContaining({ event: 'receipt', status: 'completed' }));
      expect(ledgerRows(ledger, 'node-retry')).toEqual({ receipts: 1, outbox: 1, operations: 1 });
      expect(serverTasks(title)).toBe(1);
    },
    SLOW,
  );
});
