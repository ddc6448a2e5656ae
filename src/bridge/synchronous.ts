/**
 * Synchronous upstream tools, answered as a direct call would be answered. Their calls go through
 * the executor as plain calls (so a retry attaches and a restart never sends one again); what the
 * host gets back is shaped here: the upstream's result as sent, its JSON-RPC refusal as that
 * JSON-RPC error (kept by submission key in memory until the caller reads it: after a restart the
 * ledger's evidence says why), anything else as the bridge's text.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import type { Ledger } from '../executor/ledger-port.js';
import { WireFailure, type ClientWire } from '../executor/wire-port.js';
import { wrapWireRequests } from '../executor/wrap-wire.js';
import type { CatalogEntry } from './catalog.js';

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
    return wrapWireRequests(wire, {
      failed: (call, error) => {
        if (call.request !== 'submit') return;
        if (error instanceof WireFailure && error.kind === 'rejected' && error.rpcCode !== undefined) {
          this.keep(call.args[0].submissionKey, { code: error.rpcCode, message: error.message });
        }
      },
    });
  }

  private keep(key: string, rejection: Rejection): void {
    this.byKey.set(key, rejection);
    if (this.byKey.size > KEPT) this.byKey.delete(this.byKey.keys().next().value!);
  }
}

/**
 * A synchronous tool's answer as a direct call would get it: its own result as the upstream sent
 * it; the upstream's JSON-RPC refusal as that JSON-RPC error. Anything else (still running, in
 * doubt) is the bridge's text, and for a tool with an `outputSchema` (listed unchanged) it carries
 * no `structuredContent` and is `isError`, so a host that validates results against the schema
 * (the SDK clients do) reads the text instead of rejecting the answer.
 */
export async function synchronousAnswer(
  ledger: Ledger,
  rejections: Rejections,
  entry: CatalogEntry,
  operationId: string,
  answer: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const op = await ledger.load(operationId);
  if (op === null) return answer;
  if (op.state === 'NEVER_CREATED') {
    const refused = rejections.take(op.submissionKey);
    if (refused !== undefined) throw new ProtocolError(refused.code, refused.message);
  }
  if ((await ledger.getReceipt(op.callNodeId))?.status === 'completed') return answer;
  if (entry.tool.listed.outputSchema === undefined) return answer;
  const { structuredContent: _s, ...text } = answer;
  return { ...text, isError: true };
}
