import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestOf, requestDigest } from '../core/digest.js';
import { isTerminusError, type ErrorCode } from '../core/errors.js';
import type { Acceptance, Effect } from '../executor/effects.js';
import type { OperationEvent } from '../executor/events.js';
import type { Ledger } from '../executor/ledger-port.js';
import { next } from '../executor/machine.js';
import { newOperation, type ToolOperation } from '../executor/operation.js';

/** The suite's fixed clock origin; every `now` is T0 plus an explicit offset. */
const T0 = 1_800_000_000_000;
const RESULT = { content: [{ type: 'text', text: 'report ready' }] };

let sequence = 0;

function fresh(
  overrides: { shadow?: boolean; epoch?: number; callNodeId?: string; args?: Record<string, unknown> } = {},
) {
  sequence += 1;
  const args = overrides.args ?? { n: sequence };
  return newOperation({
    id: `op-${sequence}`,
    callNodeId: overrides.callNodeId ?? `node-${sequence}`,
    requestDigest: requestDigest('report', args),
    tool: { name: 'report', descriptorVersion: 'v1' },
    body: args,
    wire: { name: 'mcp-tasks-ext', adapterVersion: '1' },
    submissionKey: `key-${sequence}`,
    executionEpoch: overrides.epoch ?? 0,
    now: T0,
    budgetMs: null,
    shadow: overrides.shadow ?? false,
  });
}

async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isTerminusError(error, code), `expected TerminusError(${code}), got ${String(error)}`).toBe(true);
}

/** Runs `next()` and persists the step the way the interpreter must. */
async function step(ledger: Ledger, record: ToolOperation, event: OperationEvent, at = 1): Promise<ToolOperation> {
  const result = next(record, event, T0 + at, 0.5);
  if (result.outcome !== 'applied') throw new Error(`${event.type} was ${result.outcome}: ${result.reason}`);
  const accept = result.effects.find(isAccept);
  if (accept === undefined) return ledger.apply({ record: result.record, expectedRevision: record.revision });
  const outcome = await ledger.acceptTerminal({
    receiptId: `rcpt-${record.id}`,
    record: result.record,
    expectedRevision: record.revision,
    acceptance: accept.acceptance,
    now: T0 + at,
  });
  if (!outcome.accepted) throw new Error('already receipted');
  return outcome.operation;
}

/** Drives a fresh operation to WORKING with task id `task-<n>`. */
async function working(ledger: Ledger, op: ToolOperation): Promise<ToolOperation> {
  const epoch = op.executionEpoch;
  let r = (await ledger.create(op)).operation;
  r = await step(ledger, r, { type: 'submit_sent', epoch });
  return step(ledger, r, { type: 'submit_acked', epoch, taskId: `task-${op.id}`, status: 'working' });
}

/** Drives to FETCHING_RESULT after the server reported `status`. */
async function fetching(ledger: Ledger, op: ToolOperation, status: 'completed' | 'failed' = 'completed') {
  const epoch = op.executionEpoch;
  let r = await working(ledger, op);
  r = await step(ledger, r, { type: 'wake', epoch, dueAt: r.wakeAt ?? 0 }, 2_000);
  r = await step(ledger, r, { type: 'status_observed', epoch, seq: 1, status }, 2_001);
  return step(ledger, r, { type: 'wake', epoch, dueAt: r.wakeAt ?? 0 }, 2_002);
}

/** The step that would accept `payload` from FETCHING_RESULT, not yet persisted. */
function acceptingStep(record: ToolOperation, payload: unknown = RESULT) {
  const result = next(
    record,
    {
      type: 'result_fetched',
      epoch: record.executionEpoch,
      status: 'completed',
      payload,
      digest: digestOf(payload),
      truncated: false,
      malformed: false,
    },
    T0 + 3_000,
    0.5,
  );
  if (result.outcome !== 'applied') throw new Error(`fixture was ${result.outcome}: ${result.reason}`);
  const accept = result.effects.find(isAccept);
  if (accept === undefined) throw new Error('fixture did not accept');
  return { record: result.record, acceptance: accept.acceptance };
}

/**
 * The `Ledger` conformance suite: every backend MUST pass it. Each case opens a fresh ledger with
 * `open` and closes it afterwards; case names cite the client invariant (C1..C8) they check.
 *
 * @example
 * ```ts
 * import { describeLedger } from 'mcp-terminus/testing';
 * describeLedger('memory', async () => createMemoryLedger());
 * ```
 */
export function describeLedger(name: string, open: () => Promise<Ledger>): void {
  describe(`Ledger conformance: ${name}`, () => {
    let current: Ledger | null = null;
    const ledger = (): Ledger => {
      if (current === null) throw new Error('ledger used outside a test');
      return current;
    };
    beforeEach(async () => {
      current = await open();
    });
    afterEach(async () => {
      await current?.close();
      current = null;
    });

    it('create stores revision 1 and load returns it', async () => {
      const op = fresh();
      const { created, operation } = await ledger().create(op);
      expect(created).toBe(true);
      expect(operation.revision).toBe(1);
      expect(await ledger().load(op.id)).toEqual(operation);
      expect(await ledger().loadByCallNode(op.callNodeId)).toEqual(operation);
      expect(await ledger().load('missing')).toBeNull();
    });

    it('C5: creating the same call node again returns the existing operation, never a second', async () => {
      const op = fresh();
      await ledger().create(op);
      const again = await ledger().create({ ...op, id: 'other-id', submissionKey: 'other-key' });
      expect(again.created).toBe(false);
      expect(again.operation.id).toBe(op.id);
      expect(await ledger().load('other-id')).toBeNull();
      expect(await ledger().findBySubmissionKey('other-key')).toBeNull();
    });

    it('C5: same call node with another request digest, or a key owned by another operation, conflicts', async () => {
      const op = fresh();
      await ledger().create(op);
      await rejectsWith(
        ledger().create({ ...fresh({ callNodeId: op.callNodeId }), requestDigest: 'x' }),
        'operation_conflict',
      );
      await rejectsWith(ledger().create({ ...fresh(), submissionKey: op.submissionKey }), 'operation_conflict');
    });

    it('apply is compare-and-set on the revision: two steps from one revision, one wins', async () => {
      const op = (await ledger().create(fresh())).operation;
      const sent = next(op, { type: 'submit_sent', epoch: 0 }, T0 + 1, 0.5);
      const lost = next(op, { type: 'submit_lost', epoch: 0, reason: 'timeout' }, T0 + 1, 0.5);
      const first = await ledger().apply({ record: sent.record, expectedRevision: op.revision });
      expect(first.revision).toBe(2);
      await rejectsWith(ledger().apply({ record: lost.record, expectedRevision: op.revision }), 'revision_conflict');
      expect((await ledger().load(op.id))?.state).toBe('SUBMITTING');
    });

    it('apply refuses moves outside the table, into receipt-writing states, and identity changes', async () => {
      const op = (await ledger().create(fresh())).operation;
      await rejectsWith(
        ledger().apply({ record: { ...op, state: 'CANCEL_REQUESTED' }, expectedRevision: 1 }),
        'invalid_argument',
      );
      const r = await working(ledger(), fresh());
      await rejectsWith(
        ledger().apply({ record: { ...r, state: 'TERMINAL_OBSERVED', callNodeId: 'x' }, expectedRevision: r.revision }),
        'invalid_argument',
      );
      const f = await fetching(ledger(), fresh());
      const { record } = acceptingStep(f);
      await rejectsWith(ledger().apply({ record, expectedRevision: f.revision }), 'invalid_argument');
      expect(await ledger().getReceipt(f.callNodeId)).toBeNull();
    });

    it('listByState filters by local state', async () => {
      const a = (await ledger().create(fresh())).operation;
      const b = await working(ledger(), fresh());
      const submitting = await ledger().listByState(['SUBMITTING'], 10);
      expect(submitting.map((o) => o.id)).toContain(a.id);
      expect(submitting.map((o) => o.id)).not.toContain(b.id);
      expect((await ledger().listByState(['WORKING', 'UNKNOWN'], 10)).map((o) => o.id)).toEqual([b.id]);
      expect(await ledger().listByState(['WORKING'], 0)).toEqual([]);
    });

    it('C1/C7: acceptTerminal writes the record, one receipt and one outbox row', async () => {
      const f = await fetching(ledger(), fresh());
      const { record, acceptance } = acceptingStep(f);
      const out = await ledger().acceptTerminal({
        receiptId: 'r1',
        record,
        expectedRevision: f.revision,
        acceptance,
        now: T0 + 5,
      });
      expect(out.accepted).toBe(true);
      expect(out.receipt).toMatchObject({ id: 'r1', callNodeId: f.callNodeId, status: 'completed', payload: RESULT });
      expect(out.receipt.resultDigest).toBe(digestOf(RESULT));
      expect((await ledger().load(f.id))?.state).toBe('ACCEPTED');
      expect(await ledger().getReceipt(f.callNodeId)).toEqual(out.receipt);
      const rows = await ledger().listOutbox(10);
      expect(rows.filter((row) => row.callNodeId === f.callNodeId)).toEqual([
        expect.objectContaining({ receiptId: 'r1', status: 'completed', acknowledgedAt: null }),
      ]);
    });

    it('C1: a second acceptance for the call node returns the existing receipt and writes nothing', async () => {
      const f = await fetching(ledger(), fresh());
      const { record, acceptance } = acceptingStep(f);
      const first = await ledger().acceptTerminal({
        receiptId: 'r1',
        record,
        expectedRevision: f.revision,
        acceptance,
        now: T0 + 5,
      });
      const other = acceptingStep(f, { content: [{ type: 'text', text: 'different' }] });
      const second = await ledger().acceptTerminal({
        receiptId: 'r2',
        record: other.record,
        expectedRevision: f.revision,
        acceptance: other.acceptance,
        now: T0 + 6,
      });
      expect(second).toEqual({ accepted: false, receipt: first.receipt });
      expect((await ledger().listOutbox(10)).filter((row) => row.callNodeId === f.callNodeId)).toHaveLength(1);
      expect((await ledger().load(f.id))?.revision).toBe(f.revision + 1);
    });

    it('C2: acceptTerminal refuses any field that does not match the stored operation', async () => {
      const f = await fetching(ledger(), fresh());
      const { record, acceptance } = acceptingStep(f);
      const bad: [Partial<Acceptance>, ErrorCode][] = [
        [{ callNodeId: 'other' }, 'acceptance_mismatch'],
        [{ requestDigest: 'other' }, 'acceptance_mismatch'],
        [{ taskId: 'other' }, 'acceptance_mismatch'],
        [{ toolVersion: 'v2' }, 'acceptance_mismatch'],
        [{ cancelGeneration: 1 }, 'acceptance_mismatch'],
        [{ status: 'failed' }, 'acceptance_mismatch'],
        [{ status: 'cancelled', resultDigest: null, payload: null }, 'acceptance_mismatch'],
        [{ resultDigest: null }, 'acceptance_mismatch'],
        [{ resultDigest: digestOf({ other: true }) }, 'acceptance_mismatch'],
        [{ payload: { tampered: true } }, 'acceptance_mismatch'],
        [{ executionEpoch: 1 }, 'lease_lost'],
      ];
      for (const [patch, code] of bad) {
        const input = {
          receiptId: 'r',
          record,
          expectedRevision: f.revision,
          acceptance: { ...acceptance, ...patch },
          now: T0,
        };
        await rejectsWith(ledger().acceptTerminal(input), code);
      }
      await rejectsWith(
        ledger().acceptTerminal({ receiptId: 'r', record, expectedRevision: f.revision - 1, acceptance, now: T0 }),
        'revision_conflict',
      );
      expect(await ledger().getReceipt(f.callNodeId)).toBeNull();
      expect((await ledger().listOutbox(10)).filter((row) => row.callNodeId === f.callNodeId)).toEqual([]);
      expect((await ledger().load(f.id))?.state).toBe('FETCHING_RESULT');
    });

    it('C2: acceptTerminal refuses to accept from a state that has not fetched', async () => {
      const w = await working(ledger(), fresh());
      const { acceptance } = acceptingStep({ ...w, state: 'FETCHING_RESULT', lastServerStatus: 'completed' });
      const record = { ...w, state: 'ACCEPTED' as const, resultDigest: acceptance.resultDigest };
      await rejectsWith(
        ledger().acceptTerminal({ receiptId: 'r', record, expectedRevision: w.revision, acceptance, now: T0 }),
        'acceptance_mismatch',
      );
      expect(await ledger().getReceipt(w.callNodeId)).toBeNull();
    });

    it('shadow operations record a receipt but no outbox row', async () => {
      const f = await fetching(ledger(), fresh({ shadow: true }));
      const { record, acceptance } = acceptingStep(f);
      const out = await ledger().acceptTerminal({
        receiptId: 'rs',
        record,
        expectedRevision: f.revision,
        acceptance,
        now: T0,
      });
      expect(out.accepted && out.receipt.shadow).toBe(true);
      expect(await ledger().getReceipt(f.callNodeId)).not.toBeNull();
      expect((await ledger().listOutbox(10)).filter((row) => row.callNodeId === f.callNodeId)).toEqual([]);
    });

    it('C7: outbox rows are listed until acknowledged, once', async () => {
      const f = await fetching(ledger(), fresh());
      await step(ledger(), f, acceptingEvent(f), 3_000);
      const [row] = await ledger().listOutbox(10);
      expect(row).toBeDefined();
      expect(await ledger().acknowledgeOutbox(row?.id ?? -1, T0 + 9)).toBe(true);
      expect(await ledger().acknowledgeOutbox(row?.id ?? -1, T0 + 10)).toBe(false);
      expect(await ledger().acknowledgeOutbox(987_654, T0 + 10)).toBe(false);
      expect(await ledger().listOutbox(10)).toEqual([]);
    });

    it('C3: a cancelled receipt stands when a late completion flags EFFECT_RECONCILIATION_REQUIRED', async () => {
      let r = await working(ledger(), fresh());
      r = await step(ledger(), r, { type: 'cancel_requested', epoch: 0, expectedGeneration: 0 });
      expect(r.state).toBe('CANCEL_REQUESTED');
      r = await step(ledger(), r, { type: 'cancel_acked', epoch: 0, generation: 1, status: 'cancelled' });
      expect(r.state).toBe('CANCELLED_ACCEPTED');
      const receipt = await ledger().getReceipt(r.callNodeId);
      expect(receipt).toMatchObject({ status: 'cancelled', cancelGeneration: 1, resultDigest: null });
      r = await step(ledger(), r, acceptingEvent(r));
      expect(r.state).toBe('EFFECT_RECONCILIATION_REQUIRED');
      expect(await ledger().getReceipt(r.callNodeId)).toEqual(receipt);
      expect((await ledger().listOutbox(10)).filter((row) => row.callNodeId === r.callNodeId)).toHaveLength(1);
    });

    it('rollback: bumping the epoch fences writes of records still at the old epoch', async () => {
      const r = await working(ledger(), fresh());
      expect(await ledger().currentEpoch()).toBe(0);
      expect(await ledger().bumpEpoch()).toBe(1);
      expect(await ledger().currentEpoch()).toBe(1);
      const stale = next(r, { type: 'wake', epoch: 0, dueAt: r.wakeAt ?? 0 }, T0 + 2_000, 0.5);
      await rejectsWith(ledger().apply({ record: stale.record, expectedRevision: r.revision }), 'lease_lost');
      await rejectsWith(ledger().create(fresh({ epoch: 0 })), 'lease_lost');
      const adopted = await step(ledger(), r, { type: 'rollback', newEpoch: 1 });
      expect(adopted.executionEpoch).toBe(1);
      expect((await ledger().create(fresh({ epoch: 1 }))).created).toBe(true);
    });

    it('C4: operations are found by current and earlier submission keys and by task id', async () => {
      const op = fresh();
      let r = (await ledger().create(op)).operation;
      r = await step(ledger(), r, { type: 'submit_lost', epoch: 0, reason: 'timeout' });
      r = await step(ledger(), r, { type: 'key_lookup_never_created', epoch: 0 });
      r = await step(ledger(), r, { type: 'resubmit', epoch: 0, submissionKey: `${op.submissionKey}-2` });
      r = await step(ledger(), r, { type: 'submit_acked', epoch: 0, taskId: 'task-c4', status: 'working' });
      expect((await ledger().findBySubmissionKey(op.submissionKey))?.id).toBe(op.id);
      expect((await ledger().findBySubmissionKey(`${op.submissionKey}-2`))?.id).toBe(op.id);
      expect(await ledger().findBySubmissionKey('never-used')).toBeNull();
      expect((await ledger().findByTaskId('task-c4')).map((o) => o.id)).toEqual([op.id]);
      expect(r.priorSubmissionKeys).toEqual([op.submissionKey]);
    });

    it('keeps the HTTP session an operation was created in through every step and its acceptance; none stays none', async () => {
      const session = { id: 'session-secret-4f1c', protocolVersion: '2025-11-25' };
      const op: ToolOperation = { ...fresh(), wire: { name: 'mcp-2025-11-25', adapterVersion: '1' }, session };
      const r = await fetching(ledger(), op);
      expect(r.session).toEqual(session);
      expect((await ledger().load(op.id))?.session).toEqual(session);
      expect((await ledger().loadByCallNode(op.callNodeId))?.session).toEqual(session);
      expect((await ledger().findBySubmissionKey(op.submissionKey))?.session).toEqual(session);
      expect((await ledger().findByTaskId(`task-${op.id}`))[0]?.session).toEqual(session);
      expect((await ledger().listByState(['FETCHING_RESULT'], 100)).find((o) => o.id === op.id)?.session).toEqual(
        session,
      );
      const { record, acceptance } = acceptingStep(r);
      const outcome = await ledger().acceptTerminal({
        receiptId: `rcpt-${op.id}`,
        record,
        expectedRevision: r.revision,
        acceptance,
        now: T0 + 3_000,
      });
      expect(outcome.accepted && outcome.operation.session).toEqual(session);
      expect((await ledger().load(op.id))?.session).toEqual(session);
      const plain = (await ledger().create(fresh())).operation;
      expect((await ledger().load(plain.id))?.session ?? null).toBeNull();
    });

    it('C5: a resubmission may not take a key another operation owns', async () => {
      const other = (await ledger().create(fresh())).operation;
      let r = (await ledger().create(fresh())).operation;
      r = await step(ledger(), r, { type: 'submit_lost', epoch: 0, reason: 'timeout' });
      r = await step(ledger(), r, { type: 'key_lookup_never_created', epoch: 0 });
      const taken = next(r, { type: 'resubmit', epoch: 0, submissionKey: other.submissionKey }, T0 + 5, 0.5);
      await rejectsWith(ledger().apply({ record: taken.record, expectedRevision: r.revision }), 'operation_conflict');
      expect((await ledger().load(r.id))?.state).toBe('NOT_FOUND_SAFE');
    });

    it('prune deletes settled operations older than the bound, keeps unacknowledged receipts and work in flight', async () => {
      const accepted = async (at: number, ack: boolean): Promise<ToolOperation> => {
        const f = await fetching(ledger(), fresh());
        const done = await step(ledger(), f, acceptingEvent(f), at);
        const row = (await ledger().listOutbox(1_000)).find((o) => o.callNodeId === done.callNodeId);
        if (ack) expect(await ledger().acknowledgeOutbox(row?.id ?? -1, T0 + at)).toBe(true);
        return done;
      };
      const old = await accepted(3_000, true);
      const unacked = await accepted(3_000, false);
      const recent = await accepted(50_000, true);
      const inFlight = await working(ledger(), fresh());
      // A dry run names exactly what the real one deletes, and deletes nothing.
      const wouldPrune = await ledger().prune({ updatedBefore: T0 + 10_000, limit: 1_000, dryRun: true });
      expect(await ledger().load(old.id)).not.toBeNull();
      const pruned = await ledger().prune({ updatedBefore: T0 + 10_000, limit: 1_000 });
      expect(wouldPrune).toEqual(pruned);
      expect(pruned).toContain(old.id);
      for (const kept of [unacked, recent, inFlight]) {
        expect(pruned).not.toContain(kept.id);
        expect((await ledger().load(kept.id))?.state).toBe(kept.state);
      }
      expect(await ledger().load(old.id)).toBeNull();
      expect(await ledger().loadByCallNode(old.callNodeId)).toBeNull();
      expect(await ledger().getReceipt(old.callNodeId)).toBeNull();
      expect(await ledger().findBySubmissionKey(old.submissionKey)).toBeNull();
      expect(await ledger().getReceipt(recent.callNodeId)).not.toBeNull();
      // The call node is forgotten: the same call node is a new operation, under the same key even.
      const again = fresh({ callNodeId: old.callNodeId, args: old.body });
      expect((await ledger().create({ ...again, submissionKey: old.submissionKey })).created).toBe(true);
      expect(await ledger().prune({ updatedBefore: T0 + 10_000, limit: 0 })).toEqual([]);
    });

    it('a closed ledger answers unavailable', async () => {
      await ledger().close();
      await rejectsWith(ledger().load('x'), 'unavailable');
    });
  });
}

function isAccept(effect: Effect): effect is Extract<Effect, { type: 'accept_terminal' }> {
  return effect.type === 'accept_terminal';
}

function acceptingEvent(record: ToolOperation): OperationEvent {
  return {
    type: 'result_fetched',
    epoch: record.executionEpoch,
    status: 'completed',
    payload: RESULT,
    digest: digestOf(RESULT),
    truncated: false,
    malformed: false,
  };
}
