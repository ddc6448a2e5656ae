/**
 * Which ledger steps wait for the disk (issue 17 item 2, figure 3): a step that records only a read
 * about to go out or a timer is a bookkeeping step (`durable: false`); every step that sends
 * something with an effect, moves the state or records a terminal status observed (C13) stays
 * durable. The SQLite ledger commits a bookkeeping step without the fsync and it is still there
 * after the file is closed and opened again.
 */
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { mustBeDurable } from '../../src/executor/durability.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import type { OperationEvent } from '../../src/executor/events.js';
import type { ToolOperation } from '../../src/executor/operation.js';
import { ev, fresh, step, workingRecord, type EventFor } from './fixtures.js';

const hint: OperationEvent = { type: 'notification', epoch: 0, status: 'completed' };

/** Steps `events` from `record`, returning each step's `mustBeDurable`. */
function durability(record: ToolOperation, events: readonly EventFor[]): boolean[] {
  const out: boolean[] = [];
  let current = record;
  for (const make of events) {
    const result = step(current, make);
    if (result.outcome !== 'applied') throw new Error(`${result.outcome}: ${result.reason}`);
    out.push(mustBeDurable(current, result.record, result.effects));
    current = result.record;
  }
  return out;
}

describe('mustBeDurable', () => {
  it('push -> read -> terminal observed -> fetch: only the terminal status observed waits for the disk (C13)', () => {
    // hint (issues the read), completed read (TERMINAL_OBSERVED), wake (FETCHING_RESULT + fetch).
    expect(durability(workingRecord(), [hint, (r) => ev.status(r, 'completed'), ev.wake])).toEqual([
      false,
      true,
      false,
    ]);
  });

  it('a poll on the timer and its working answer are bookkeeping', () => {
    expect(durability(workingRecord(), [ev.wake, (r) => ev.status(r, 'working')])).toEqual([false, false]);
  });

  it('the submission, its answer (a state move) and a cancel stay durable (C8)', () => {
    expect(durability(fresh(), [ev.sent, ev.acked, ev.cancel])).toEqual([true, true, true]);
  });

  it('an input round opened by a read stays durable (C10)', () => {
    const record = workingRecord();
    const polled = step(record, ev.wake).record;
    const asked = (r: ToolOperation) => ev.status(r, 'input_required', { inputRequests: { q: { method: 'x' } } });
    expect(durability(polled, [asked])).toEqual([true]);
  });
});

describe('SQLite ledger: a bookkeeping step', () => {
  const dir = mkdtempSync(join(tmpdir(), 'terminus-durability-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is committed (read back after the file is opened again), and durable steps go on after it', async () => {
    const path = join(dir, 'ledger.db');
    const ledger = openSqliteLedger({ path });
    const created = (await ledger.create(fresh())).operation;
    let stored = created;
    for (const [make, durable] of [
      [ev.sent, true],
      [ev.acked, true],
      [ev.wake, false],
      [(r: ToolOperation) => ev.status(r, 'working'), false],
      [ev.cancel, true],
    ] as const) {
      const result = step(stored, make);
      if (result.outcome !== 'applied') throw new Error(result.reason);
      expect(mustBeDurable(stored, result.record, result.effects)).toBe(durable);
      stored = await ledger.apply({ record: result.record, expectedRevision: stored.revision, durable });
    }
    // A refused bookkeeping step leaves the ledger writable.
    await expect(
      ledger.apply({ record: stored, expectedRevision: stored.revision - 1, durable: false }),
    ).rejects.toMatchObject({ code: 'revision_conflict' });
    await ledger.close();
    const again = openSqliteLedger({ path });
    expect(await again.load(created.id)).toMatchObject({ state: 'CANCEL_REQUESTED', revision: stored.revision });
    await again.close();
  });
});
