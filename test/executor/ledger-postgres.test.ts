import { afterAll, describe, expect, it } from 'vitest';
import { digestOf, requestDigest } from '../../src/core/digest.js';
import { isTerminusError } from '../../src/core/errors.js';
import { openPostgresLedger } from '../../src/executor/ledger/postgres.js';
import type { Effect } from '../../src/executor/effects.js';
import type { OperationEvent } from '../../src/executor/events.js';
import type { Ledger } from '../../src/executor/ledger-port.js';
import { next } from '../../src/executor/machine.js';
import { newOperation, type ToolOperation } from '../../src/executor/operation.js';
import { describeLedger } from '../../src/testing/ledger-suite.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, PG_URL } from '../store/postgres-fixture.js';

const T0 = 1_800_000_000_000;
const op = (n: number, key = `key-${n}`) =>
  newOperation({
    id: `op-${n}`,
    callNodeId: `node-${n}`,
    requestDigest: requestDigest('report', { n }),
    tool: { name: 'report', descriptorVersion: 'v1' },
    body: { n },
    wire: { name: 'mcp-2025-11-25', adapterVersion: '1' },
    submissionKey: key,
    executionEpoch: 0,
    now: T0,
    budgetMs: 60_000,
  });

/** Persists one non-accepting step of `next()`. */
async function step(ledger: Ledger, record: ToolOperation, event: OperationEvent, at: number): Promise<ToolOperation> {
  const result = next(record, event, T0 + at, 0.5);
  if (result.outcome !== 'applied') throw new Error(`${event.type} was ${result.outcome}`);
  return ledger.apply({ record: result.record, expectedRevision: record.revision });
}

/** Drives a new operation to FETCHING_RESULT and returns it with the accepting step, unpersisted. */
async function readyToAccept(ledger: Ledger, n: number) {
  let r = (await ledger.create(op(n))).operation;
  r = await step(ledger, r, { type: 'submit_sent', epoch: 0 }, 1);
  r = await step(ledger, r, { type: 'submit_acked', epoch: 0, taskId: `task-${n}`, status: 'working' }, 2);
  r = await step(ledger, r, { type: 'wake', epoch: 0, dueAt: r.wakeAt ?? 0 }, 2000);
  r = await step(ledger, r, { type: 'status_observed', epoch: 0, seq: 1, status: 'completed' }, 2001);
  r = await step(ledger, r, { type: 'wake', epoch: 0, dueAt: r.wakeAt ?? 0 }, 2002);
  const payload = { content: [{ type: 'text', text: `result ${n}` }] };
  const event: OperationEvent = {
    type: 'result_fetched',
    epoch: 0,
    status: 'completed',
    payload,
    digest: digestOf(payload),
    truncated: false,
    malformed: false,
  };
  const result = next(r, event, T0 + 3000, 0.5);
  if (result.outcome !== 'applied') throw new Error(`result_fetched was ${result.outcome}`);
  const effects: readonly Effect[] = result.effects;
  const effect = effects.find((e): e is Extract<Effect, { type: 'accept_terminal' }> => e.type === 'accept_terminal');
  if (effect === undefined) throw new Error('fixture did not reach acceptance');
  return { stored: r, record: result.record, acceptance: effect.acceptance };
}

if (PG_URL === '') {
  describe('Ledger conformance: postgres', failWithoutDatabase);
} else {
  const admin = adminPool();
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(admin, schema);
    await admin.end();
  });
  const open = (schema = freshSchema('ledger')): Promise<Ledger> => {
    if (!schemas.includes(schema)) schemas.push(schema);
    return openPostgresLedger({ connectionString: PG_URL, schema, maxConnections: 4 });
  };

  // Each case on its own schema, migrated from scratch (the suite's ids repeat across runs).
  describeLedger('postgres', () => open());

  describe('PostgreSQL ledger: several executors on one database', () => {
    it('the same call node created by two executors at once: one operation, 100 times', async () => {
      const schema = freshSchema('ledger');
      const [a, b] = await Promise.all([open(schema), open(schema)]);
      try {
        for (let n = 0; n < 100; n += 1) {
          const [x, y] = await Promise.all([a.create(op(n)), b.create(op(n))]);
          expect([x.created, y.created].filter(Boolean)).toHaveLength(1);
          expect(x.operation).toEqual(y.operation);
        }
        const count = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".ledger_operations`);
        expect(count.rows).toEqual([{ n: 100 }]);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('two operations racing for one submission key: one gets it, the other conflicts (C5)', async () => {
      const schema = freshSchema('ledger');
      const [a, b] = await Promise.all([open(schema), open(schema)]);
      try {
        for (let n = 0; n < 50; n += 1) {
          const results = await Promise.allSettled([
            a.create(op(1000 + n, `k-${n}`)),
            b.create(op(2000 + n, `k-${n}`)),
          ]);
          expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
          const failed = results.find((r) => r.status === 'rejected');
          expect(isTerminusError(failed?.reason, 'operation_conflict')).toBe(true);
          expect(await a.findBySubmissionKey(`k-${n}`)).not.toBeNull();
        }
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('two executors stepping one record from the same revision: exactly one lands', async () => {
      const schema = freshSchema('ledger');
      const [a, b] = await Promise.all([open(schema), open(schema)]);
      try {
        for (let n = 0; n < 30; n += 1) {
          const { operation } = await a.create(op(n));
          const sent = next(operation, { type: 'submit_sent', epoch: 0 }, T0 + 1, 0.5);
          const lost = next(operation, { type: 'submit_lost', epoch: 0, reason: 'timeout' }, T0 + 1, 0.5);
          const results = await Promise.allSettled([
            a.apply({ record: sent.record, expectedRevision: 1 }),
            b.apply({ record: lost.record, expectedRevision: 1 }),
          ]);
          expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
          const failure = results.find((r) => r.status === 'rejected');
          expect(isTerminusError(failure?.reason, 'revision_conflict')).toBe(true);
          expect((await b.load(`op-${n}`))?.revision).toBe(2);
        }
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('C1: two executors accepting one call node at once: one receipt, one outbox row, 30 times', async () => {
      const schema = freshSchema('ledger');
      const [a, b] = await Promise.all([open(schema), open(schema)]);
      try {
        for (let n = 0; n < 30; n += 1) {
          const ready = await readyToAccept(a, n);
          const accept = (ledger: Ledger, receiptId: string) =>
            ledger.acceptTerminal({
              receiptId,
              record: ready.record,
              expectedRevision: ready.stored.revision,
              acceptance: ready.acceptance,
              now: T0 + 3000,
            });
          const [x, y] = await Promise.all([accept(a, `rcpt-a-${n}`), accept(b, `rcpt-b-${n}`)]);
          expect([x.accepted, y.accepted].filter(Boolean)).toHaveLength(1);
          expect(x.receipt).toEqual(y.receipt);
          expect(await b.getReceipt(`node-${n}`)).toEqual(x.receipt);
        }
        const outbox = await a.listOutbox(1000);
        expect(outbox).toHaveLength(30);
        expect(new Set(outbox.map((row) => row.callNodeId)).size).toBe(30);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('keeps operations and the epoch across close and reopen; migrations apply once', async () => {
      const schema = freshSchema('ledger');
      const first = await open(schema);
      const { operation } = await first.create(op(1));
      expect(await first.bumpEpoch()).toBe(1);
      await first.close();
      const second = await open(schema);
      expect(await second.load('op-1')).toEqual(operation);
      expect(await second.currentEpoch()).toBe(1);
      await second.close();
      const rows = await admin.query(`SELECT component, id FROM "${schema}".schema_migrations`);
      expect(rows.rows).toEqual([
        { component: 'ledger', id: 1 },
        { component: 'ledger', id: 2 },
        { component: 'ledger', id: 3 },
      ]);
    });

    it('C12: a synchronous answer is stored as an immediate receipt (migration 2), a task receipt is not', async () => {
      const ledger = await open();
      try {
        let r = (await ledger.create(op(7))).operation;
        r = await step(ledger, r, { type: 'submit_sent', epoch: 0 }, 1);
        const payload = { content: [{ type: 'text', text: 'inline' }], isError: true };
        const event: OperationEvent = {
          type: 'submit_completed',
          epoch: 0,
          payload,
          digest: digestOf(payload),
          valid: true,
        };
        const result = next(r, event, T0 + 2, 0.5);
        const accept = result.effects.find((e) => e.type === 'accept_terminal');
        if (result.outcome !== 'applied' || accept?.type !== 'accept_terminal') throw new Error('not accepted');
        const outcome = await ledger.acceptTerminal({
          receiptId: 'rcpt-7',
          record: result.record,
          expectedRevision: r.revision,
          acceptance: accept.acceptance,
          now: T0 + 2,
        });
        expect(outcome.accepted).toBe(true);
        expect(await ledger.getReceipt('node-7')).toMatchObject({
          immediate: true,
          taskId: '',
          status: 'completed',
          payload,
        });
        expect((await ledger.listOutbox(10)).map((row) => row.callNodeId)).toEqual(['node-7']);
        const task = await readyToAccept(ledger, 8);
        await ledger.acceptTerminal({
          receiptId: 'rcpt-8',
          record: task.record,
          expectedRevision: task.stored.revision,
          acceptance: task.acceptance,
          now: T0 + 3_000,
        });
        expect((await ledger.getReceipt('node-8'))?.immediate).toBeUndefined();
      } finally {
        await ledger.close();
      }
    });
  });
}
