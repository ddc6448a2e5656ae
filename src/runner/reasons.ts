import { leaseLost, TerminusError } from '../core/errors.js';

/**
 * Why a handler's signal was aborted. The reason is a `TerminusError` a handler can rethrow; the
 * runner reads the kind back from `details.abort` to decide what to write (nothing, a late outcome,
 * or a lease release).
 */
export const ABORT_KINDS = ['cancelled', 'lease_lost', 'shutdown'] as const;
export type AbortKind = (typeof ABORT_KINDS)[number];

export function cancelledReason(taskId: string): TerminusError {
  return new TerminusError('already_terminal', `Task ${taskId} was cancelled`, {
    details: { taskId, abort: 'cancelled' },
  });
}

export function leaseLostReason(taskId: string, epoch: number, cause?: unknown): TerminusError {
  const lost = leaseLost(taskId, epoch);
  return new TerminusError('lease_lost', lost.message, {
    cause,
    details: { ...lost.details, abort: 'lease_lost' },
  });
}

export function shutdownReason(taskId: string): TerminusError {
  return new TerminusError('unavailable', `Worker stopping; task ${taskId} will be resumed by the next claim`, {
    details: { taskId, abort: 'shutdown' },
  });
}

export function abortKind(signal: AbortSignal): AbortKind | undefined {
  if (!signal.aborted) return undefined;
  const reason: unknown = signal.reason;
  if (reason instanceof TerminusError) {
    const kind = reason.details?.['abort'];
    if (ABORT_KINDS.includes(kind as AbortKind)) return kind as AbortKind;
  }
  return undefined;
}
