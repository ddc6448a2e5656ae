/**
 * Which ledger steps must reach the disk before their effects leave, and which need only survive a
 * crash of the process. A step that records nothing but a read about to go out (a status poll, a
 * result fetch) or a timer is a bookkeeping step: if a power loss rolls it back, the record is the
 * durable one before it, from which a resumed executor reads again (a read changes nothing on the
 * server). Every other step (a submission, a cancel, an input reply, a move into another state, a
 * terminal status observed, which C13 must remember) stays durable.
 *
 * Why: figure 3 (completion-to-acceptance) took four fsynced ledger commits between a push and the
 * receipt (the push's read, the terminal status, the fetch, the receipt); at the machine's ~260
 * fsyncs/s that alone is ~15 ms of the 20 ms target. Two of the four are bookkeeping steps.
 */
import type { Effect } from './effects.js';
import type { LocalState, ToolOperation } from './operation.js';

/** Effects that only read the server or set a timer. */
const READS: ReadonlySet<Effect['type']> = new Set(['poll_status', 'fetch_result', 'schedule_wake', 'emit_status']);
/** States in which only reads go out. */
const READING: readonly LocalState[] = ['WORKING', 'CANCEL_REQUESTED', 'FETCHING_RESULT'];

/**
 * True when the step from `base` to `record` with `effects` must be durable before its effects are
 * performed; false for a bookkeeping step (see the module comment).
 *
 * @example
 * ```ts
 * await ledger.apply({ record, expectedRevision: base.revision, durable: mustBeDurable(base, record, effects) });
 * ```
 */
export function mustBeDurable(base: ToolOperation, record: ToolOperation, effects: readonly Effect[]): boolean {
  if (!effects.every((effect) => READS.has(effect.type))) return true;
  if (!READING.includes(record.state)) return true;
  const sameState =
    base.state === record.state || (base.state === 'TERMINAL_OBSERVED' && record.state === 'FETCHING_RESULT');
  if (!sameState) return true;
  return JSON.stringify(base.observedTerminal ?? null) !== JSON.stringify(record.observedTerminal ?? null);
}
