/**
 * The executor's ledger as the checkers see it: every stored record (the latest per operation, read
 * synchronously by the send-time checks of C8 and C10) and every acceptance outcome (C1).
 */
import type { Ledger } from '../../executor/ledger-port.js';
import type { LocalState, ToolOperation } from '../../executor/operation.js';

export interface LedgerFacts {
  readonly latest: Map<string, ToolOperation>;
  /** Receipts written (accepted: true) per call node. */
  readonly receiptsWritten: Map<string, number>;
  readonly statesEntered: Map<LocalState, number>;
  /** Ledger writes refused (revision, epoch, acceptance mismatch): a symptom worth seeing in the trace. */
  readonly refused: string[];
}

export function newLedgerFacts(): LedgerFacts {
  return { latest: new Map(), receiptsWritten: new Map(), statesEntered: new Map(), refused: [] };
}

export function recordingLedger(inner: Ledger, facts: LedgerFacts): Ledger {
  const stored = (record: ToolOperation): void => {
    const before = facts.latest.get(record.id);
    if (before === undefined || before.state !== record.state) {
      facts.statesEntered.set(record.state, (facts.statesEntered.get(record.state) ?? 0) + 1);
    }
    facts.latest.set(record.id, record);
  };
  const refused = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      facts.refused.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    }
  };
  return {
    ...inner,
    create: async (record) => {
      const outcome = await refused('create', () => inner.create(record));
      if (outcome.created) stored(outcome.operation);
      return outcome;
    },
    apply: async (step) => {
      const record = await refused('apply', () => inner.apply(step));
      stored(record);
      return record;
    },
    acceptTerminal: async (input) => {
      const outcome = await refused('acceptTerminal', () => inner.acceptTerminal(input));
      if (outcome.accepted) {
        stored(outcome.operation);
        const node = outcome.receipt.callNodeId;
        facts.receiptsWritten.set(node, (facts.receiptsWritten.get(node) ?? 0) + 1);
      }
      return outcome;
    },
  };
}
