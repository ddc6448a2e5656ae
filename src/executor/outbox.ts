/**
 * The outbox reader: every terminal receipt (non-shadow) has exactly one outbox row, written in the
 * acceptance transaction (C7). `next()` yields each unacknowledged row once per executor; `ack()`
 * marks it delivered. A crash between yield and ack yields it again from the next executor, so the
 * consumer deduplicates by receipt id (at-least-once across restarts, once within an executor).
 */
import type { Clock } from '../core/ports.js';
import type { Outbox, OutboxItem } from './executor-types.js';
import { ExecutorError } from './executor-types.js';
import type { Ledger } from './ledger-port.js';

const PAGE = 256;

export interface OutboxReader extends Outbox {
  /** A receipt was accepted: wake waiting readers. */
  notify(): void;
  close(): void;
}

export function createOutbox(ledger: Ledger, clock: Clock): OutboxReader {
  const yielded = new Map<string, number>();
  let generation = 0;
  let closed = false;
  const waiters = new Set<() => void>();

  const wakeAll = (): void => {
    for (const wake of [...waiters]) wake();
    waiters.clear();
  };

  const reader: OutboxReader = {
    async next(signal) {
      for (;;) {
        if (closed) throw new ExecutorError('closed', 'executor closed');
        signal?.throwIfAborted();
        const seen = generation;
        const rows = await ledger.listOutbox(PAGE + yielded.size);
        const row = rows.find((candidate) => !yielded.has(candidate.receiptId));
        if (row !== undefined) {
          const receipt = await ledger.getReceipt(row.callNodeId);
          if (receipt !== null) {
            yielded.set(row.receiptId, row.id);
            return { outboxId: row.id, receipt } satisfies OutboxItem;
          }
        }
        if (seen !== generation) continue;
        await new Promise<void>((resolve, reject) => {
          const onAbort = (): void => {
            waiters.delete(wake);
            reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
          };
          const wake = (): void => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          };
          waiters.add(wake);
          signal?.addEventListener('abort', onAbort, { once: true });
        });
      }
    },

    async ack(receiptId) {
      let outboxId = yielded.get(receiptId);
      if (outboxId === undefined) {
        const rows = await ledger.listOutbox(PAGE + yielded.size);
        outboxId = rows.find((row) => row.receiptId === receiptId)?.id;
      }
      if (outboxId === undefined) return false;
      return ledger.acknowledgeOutbox(outboxId, clock.now());
    },

    notify() {
      generation += 1;
      wakeAll();
    },

    close() {
      closed = true;
      wakeAll();
    },

    [Symbol.asyncIterator]() {
      return {
        next: async (): Promise<IteratorResult<OutboxItem>> => {
          try {
            return { value: await reader.next(), done: false };
          } catch (error) {
            if (error instanceof ExecutorError && error.code === 'closed') return { value: undefined, done: true };
            throw error;
          }
        },
      };
    },
  };
  return reader;
}
