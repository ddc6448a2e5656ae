/**
 * C13: a terminal status, once observed, is never followed when the server later reports another
 * one (or `working` again), and a result whose digest changes between reads is never accepted. The
 * first terminal report is kept on the record (`observedTerminal`); every later report is compared
 * with it, and a change sends the operation to UNKNOWN with both reports as evidence, for an operator.
 * No automatic reconciliation follows it: a key lookup that finds the task again is one more report,
 * compared the same way.
 */
import type { TerminalStatus } from '../../core/task.js';
import type { ServerReport, WireStatus } from '../operation.js';
import type { Draft } from '../step.js';

export interface Change {
  readonly kind: 'terminal_status_changed' | 'result_changed';
  readonly observed: ServerReport;
  readonly reported: ServerReport;
}

/**
 * What changed between the first terminal report and this one (`status`, and the digest of the
 * result read with it when there is one); null when nothing did, or nothing was observed yet.
 */
export function changeOf(d: Draft, status: WireStatus, resultDigest?: string): Change | null {
  const first = d.record.observedTerminal ?? null;
  if (first === null) return null;
  const observed: ServerReport = {
    status: first.status,
    at: first.at,
    ...(first.resultDigest === undefined ? {} : { resultDigest: first.resultDigest }),
  };
  const reported: ServerReport = {
    status,
    at: d.now,
    ...(resultDigest === undefined ? {} : { resultDigest }),
  };
  if (status !== first.status) return { kind: 'terminal_status_changed', observed, reported };
  if (resultDigest !== undefined && first.resultDigest !== undefined && resultDigest !== first.resultDigest) {
    return { kind: 'result_changed', observed, reported };
  }
  return null;
}

/** Keeps the first terminal report; a later one only adds the result digest the first lacked. */
export function noteTerminal(d: Draft, status: TerminalStatus, resultDigest?: string): void {
  const first = d.record.observedTerminal ?? null;
  if (first === null) {
    d.set({ observedTerminal: { status, at: d.now, ...(resultDigest === undefined ? {} : { resultDigest }) } });
  } else if (first.resultDigest === undefined && resultDigest !== undefined && first.status === status) {
    d.set({ observedTerminal: { ...first, resultDigest } });
  }
}
