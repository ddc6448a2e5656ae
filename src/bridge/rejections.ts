/**
 * The JSON-RPC refusals of submissions, kept by submission key until the caller that made the call
 * reads its answer: a synchronous tool the upstream refuses (`-32602` for bad arguments, say) is
 * answered to the host with that same JSON-RPC error, as a direct call would be, while the ledger
 * records the operation as never created. In memory: after a restart the ledger's evidence says why.
 */
import { WireFailure, type ClientWire } from '../executor/wire-port.js';

export interface Rejection {
  readonly code: number;
  readonly message: string;
}

/** Refusals kept at most; the oldest goes first (a caller reads its own within its request). */
const KEPT = 1_000;

export class Rejections {
  private readonly byKey = new Map<string, Rejection>();

  /** The refusal of the submission under `submissionKey`, once. */
  take(submissionKey: string): Rejection | undefined {
    const rejection = this.byKey.get(submissionKey);
    this.byKey.delete(submissionKey);
    return rejection;
  }

  /** The same wire, keeping the JSON-RPC refusal of each submission; nothing else changes. */
  observe(wire: ClientWire): ClientWire {
    return {
      ...wire,
      submit: async (request, signal) => {
        try {
          return await wire.submit(request, signal);
        } catch (error) {
          if (error instanceof WireFailure && error.kind === 'rejected' && error.rpcCode !== undefined) {
            this.keep(request.submissionKey, { code: error.rpcCode, message: error.message });
          }
          throw error;
        }
      },
    };
  }

  private keep(key: string, rejection: Rejection): void {
    this.byKey.set(key, rejection);
    if (this.byKey.size > KEPT) this.byKey.delete(this.byKey.keys().next().value!);
  }
}
