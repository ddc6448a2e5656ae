/**
 * In-memory `Ledger`: the reference behaviour for tests and the simulation. Not durable. Every
 * method runs to completion without awaiting in between, so each one is atomic; records are copied
 * in and out so callers can never mutate what is stored.
 */
import { TerminusError } from '../../core/errors.js';
import { PRUNABLE_STATES, type Ledger, type OutboxRow, type Receipt } from '../ledger-port.js';
import type { ToolOperation } from '../operation.js';
import { checkAcceptance, checkApply, checkCreate, checkRecreate, keyConflict } from './checks.js';

/**
 * @example
 * const ledger = createMemoryLedger();
 * const { operation } = await ledger.create(newOperation({ ... }));
 */
export function createMemoryLedger(): Ledger {
  const operations = new Map<string, ToolOperation>();
  const byCallNode = new Map<string, string>();
  const byKey = new Map<string, string>();
  const receipts = new Map<string, Receipt>();
  const outbox: OutboxRow[] = [];
  let epoch = 0;
  let nextOutboxId = 1;
  let closed = false;

  const copy = <T>(value: T): T => structuredClone(value);
  const open = (): void => {
    if (closed) throw new TerminusError('unavailable', 'ledger is closed');
  };
  const claimKey = (key: string, operationId: string): void => {
    const owner = byKey.get(key);
    if (owner !== undefined && owner !== operationId) throw keyConflict(key, owner);
  };

  return {
    async create(record) {
      open();
      const existingId = byCallNode.get(record.callNodeId);
      const existing = existingId === undefined ? undefined : operations.get(existingId);
      if (existing !== undefined) {
        checkRecreate(existing, record);
        return { created: false, operation: copy(existing) };
      }
      checkCreate(record, epoch);
      if (operations.has(record.id)) throw new TerminusError('operation_conflict', `operation ${record.id} exists`);
      claimKey(record.submissionKey, record.id);
      const stored: ToolOperation = { ...copy(record), revision: 1 };
      operations.set(stored.id, stored);
      byCallNode.set(stored.callNodeId, stored.id);
      byKey.set(stored.submissionKey, stored.id);
      return { created: true, operation: copy(stored) };
    },

    async load(operationId) {
      open();
      const found = operations.get(operationId);
      return found === undefined ? null : copy(found);
    },

    async loadByCallNode(callNodeId) {
      open();
      const id = byCallNode.get(callNodeId);
      const found = id === undefined ? undefined : operations.get(id);
      return found === undefined ? null : copy(found);
    },

    async listByState(states, limit) {
      open();
      return [...operations.values()]
        .filter((op) => states.includes(op.state))
        .sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : 1))
        .slice(0, Math.max(0, limit))
        .map(copy);
    },

    async apply(step) {
      open();
      const stored = checkApply(operations.get(step.record.id) ?? null, step, epoch);
      claimKey(stored.submissionKey, stored.id);
      operations.set(stored.id, copy(stored));
      byKey.set(stored.submissionKey, stored.id);
      return copy(stored);
    },

    async acceptTerminal(input) {
      open();
      const existing = receipts.get(input.record.callNodeId);
      if (existing !== undefined) return { accepted: false, receipt: copy(existing) };
      const write = checkAcceptance(operations.get(input.record.id) ?? null, input, epoch);
      operations.set(write.record.id, copy(write.record));
      receipts.set(write.receipt.callNodeId, copy(write.receipt));
      if (write.outbox !== null) outbox.push({ ...write.outbox, id: nextOutboxId++ });
      return { accepted: true, receipt: copy(write.receipt), operation: copy(write.record) };
    },

    async getReceipt(callNodeId) {
      open();
      const found = receipts.get(callNodeId);
      return found === undefined ? null : copy(found);
    },

    async listOutbox(limit) {
      open();
      return outbox
        .filter((row) => row.acknowledgedAt === null)
        .slice(0, Math.max(0, limit))
        .map(copy);
    },

    async acknowledgeOutbox(outboxId, now) {
      open();
      const index = outbox.findIndex((row) => row.id === outboxId && row.acknowledgedAt === null);
      const row = outbox[index];
      if (row === undefined) return false;
      outbox[index] = { ...row, acknowledgedAt: now };
      return true;
    },

    async currentEpoch() {
      open();
      return epoch;
    },

    async bumpEpoch() {
      open();
      epoch += 1;
      return epoch;
    },

    async findBySubmissionKey(submissionKey) {
      open();
      const id = byKey.get(submissionKey);
      const found = id === undefined ? undefined : operations.get(id);
      return found === undefined ? null : copy(found);
    },

    async findByTaskId(taskId) {
      open();
      return [...operations.values()].filter((op) => op.taskId === taskId).map(copy);
    },

    async prune({ updatedBefore, limit, dryRun }) {
      open();
      const prunable: readonly string[] = PRUNABLE_STATES;
      const pending = new Set(outbox.filter((row) => row.acknowledgedAt === null).map((row) => row.operationId));
      const doomed = [...operations.values()]
        .filter((op) => prunable.includes(op.state) && op.updatedAt < updatedBefore && !pending.has(op.id))
        .sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : 1))
        .slice(0, Math.max(0, limit));
      if (dryRun === true) return doomed.map((op) => op.id);
      for (const op of doomed) {
        operations.delete(op.id);
        byCallNode.delete(op.callNodeId);
        receipts.delete(op.callNodeId);
        for (const [key, owner] of byKey) if (owner === op.id) byKey.delete(key);
        for (let i = outbox.length - 1; i >= 0; i--) if (outbox[i]!.operationId === op.id) outbox.splice(i, 1);
      }
      return doomed.map((op) => op.id);
    },

    async close() {
      closed = true;
    },
  };
}
