/**
 * A receipt against the server: the final task it should match (terminal-state divergence), and
 * the first terminal answer the client received, which it should have kept (C13).
 */
import { canonicalJson } from '../../core/digest.js';
import { isTerminal, type TaskRecord } from '../../core/task.js';
import type { ToolOperation } from '../../executor/operation.js';
import type { WireEvent } from '../network/wire-log.js';
import { normalizeResult } from '../wires/payload.js';
import type { SimWire } from '../wires/wire.js';

export function divergence(
  record: ToolOperation,
  receipt: { status: string; payload: unknown; immediate?: boolean } | null,
  final: TaskRecord | null,
  tasks: number,
  wire: SimWire,
): string | null {
  if (receipt === null) {
    if (record.state === 'NEVER_CREATED' && tasks > 0) return 'NEVER_CREATED but the server holds a task';
    return null;
  }
  // A synchronous answer has no task to compare with; C2 matched its payload to the answer delivered.
  if (receipt.immediate === true) return tasks > 0 ? 'immediate receipt but the server holds a task' : null;
  if (final === null) return `receipt ${receipt.status} but the server has no task`;
  if (receipt.status === 'expired') {
    const observed = (receipt.payload as { observedStatus?: unknown } | null)?.observedStatus;
    return observed === final.status
      ? null
      : `expired receipt observed ${String(observed)}, server ended ${final.status}`;
  }
  if (receipt.status !== final.status) return `receipt ${receipt.status}, server ended ${final.status}`;
  if (
    final.status === 'completed' &&
    canonicalJson(normalizeResult(receipt.payload)) !== canonicalJson(normalizeResult(final.result))
  ) {
    return 'completed with a result other than the server result';
  }
  if (final.status === 'failed') {
    const e = receipt.payload as { code?: unknown; message?: unknown } | null;
    // A wire that reports a failure as a message only (SEP-1391, L-11) is matched on the message.
    const codeDiffers = wire.failedMatch === 'code+message' && e?.code !== final.error?.code;
    if (codeDiffers || e?.message !== final.error?.message) return 'failed with an error other than the server error';
  }
  return null;
}

/**
 * The first terminal answer about `taskId` the client received, against its receipt: a receipt of
 * another status, or of another result, followed a change (C13). A correct server answers one
 * terminal status and one result for good (S2), so this holds trivially against one.
 */
export function followedChange(
  receipt: { status: string; payload: unknown; immediate?: boolean } | null,
  taskId: string | undefined,
  events: readonly WireEvent[],
): string | null {
  if (receipt === null || receipt.immediate === true || receipt.status === 'expired' || taskId === undefined) {
    return null;
  }
  const first = events.find(
    (e) => e.kind === 'answer' && e.taskId === taskId && e.status !== undefined && isTerminal(e.status),
  );
  if (first === undefined) return null;
  if (first.status !== receipt.status) {
    return `first answered ${String(first.status)} at ${first.at}, then followed to a ${receipt.status} receipt`;
  }
  // The first answer that carried the result: the status answer on the Tasks extension, a result
  // read of its own on the wires that fetch it apart (2025-11-25, SEP-1391, AIP-151).
  const firstResult = events.find(
    (e) => e.kind === 'answer' && e.taskId === taskId && e.status === 'completed' && e.payload !== undefined,
  );
  if (
    receipt.status === 'completed' &&
    firstResult !== undefined &&
    firstResult.payload !== canonicalJson(normalizeResult(receipt.payload))
  ) {
    return `accepted a result other than the one first answered at ${firstResult.at} (it changed between reads)`;
  }
  return null;
}
