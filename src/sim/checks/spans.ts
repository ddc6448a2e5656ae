/**
 * Stretches of an operation's history the figures time: a cancel until it is confirmed, a doubt
 * (SUBMISSION_UNKNOWN/UNKNOWN) until it is settled or handed to an operator, and the part of a
 * stretch the client had to wait out (Retry-After, downtime, an expiry partition).
 */
import type { ToolOperation } from '../../executor/operation.js';
import type { WireEvent } from '../network/wire-log.js';

const RECEIPTED = new Set(['ACCEPTED', 'CANCELLED_ACCEPTED', 'EXPIRED_WITH_RECEIPT', 'EFFECT_RECONCILIATION_REQUIRED']);
/** The states of an operation in doubt. */
export const DOUBT = new Set(['SUBMISSION_UNKNOWN', 'UNKNOWN']);

/** A stretch of virtual time, ms. */
export interface Span {
  readonly from: number;
  readonly until: number;
}

/**
 * From the first cancel request until the client knows whether the cancel won: a cancelled receipt,
 * or the terminal status that beat it (fetching that result is result retrieval, not confirmation).
 * A cancel still open at the end counts until the end.
 */
export function cancelSpan(record: ToolOperation, now: number): Span | null {
  const asked = record.history.find((h) => h.to === 'CANCEL_REQUESTED');
  if (asked === undefined) return null;
  const done = record.history.find((h) => h.at >= asked.at && (RECEIPTED.has(h.to) || h.to === 'TERMINAL_OBSERVED'));
  return { from: asked.at, until: done?.at ?? Math.max(now, asked.at) };
}

/** When the record entered UNKNOWN last (or `now`). */
export function listedAt(record: ToolOperation, now: number): number {
  const listed = record.history.filter((h) => h.to === 'UNKNOWN').at(-1);
  return listed?.at ?? now;
}

/**
 * The longest stretch of `window` with no status read or cancel sent, less the parts of it the
 * client had to wait out (`imposed`).
 */
export function longestFreeGap(window: Span, events: readonly WireEvent[], imposed: readonly Span[]): number {
  const sends = events
    .filter((e) => e.kind === 'send' && (e.method === 'tasks/get' || e.method === 'tasks/cancel'))
    .map((e) => e.at)
    .filter((at) => at > window.from && at < window.until);
  const points = [window.from, ...sends, window.until];
  let longest = 0;
  for (let i = 1; i < points.length; i++) {
    const gap = { from: points[i - 1] as number, until: points[i] as number };
    longest = Math.max(longest, gap.until - gap.from - coveredWithin(imposed, gap));
  }
  return longest;
}

/** How much of `window` the union of `spans` covers. */
export function coveredWithin(spans: readonly Span[], window: Span): number {
  const clipped = spans
    .map((s) => ({ from: Math.max(s.from, window.from), until: Math.min(s.until, window.until) }))
    .filter((s) => s.until > s.from)
    .sort((a, b) => a.from - b.from);
  let total = 0;
  let end = -Infinity;
  for (const s of clipped) {
    const from = Math.max(s.from, end);
    if (s.until > from) total += s.until - from;
    end = Math.max(end, s.until);
  }
  return total;
}

/**
 * Evidence after which no request the executor may send settles an UNKNOWN: the server cannot look
 * the key up (or the task under it is gone: an expired task's key answers `-32602`), the call went out
 * without its key (C12), the key denies a task the server acknowledged, or a synchronous answer did
 * not verify. Each is listed for an operator on purpose (docs/calling-tools.md, "Executor states").
 */
const FOR_AN_OPERATOR = new Set<string>([
  'key_lookup_unsupported',
  'plain_call_lost',
  'never_created_after_ack',
  'result_unverifiable',
]);

/**
 * An operation left UNKNOWN for an operator at the series end: its last evidence is one of
 * `FOR_AN_OPERATOR`, or it used every reconciling lookup its policy allows. Its last step
 * (`updatedAt`, never earlier than the hand-over) is when it was handed over.
 */
export function handedOver(record: ToolOperation): boolean {
  if (record.state !== 'UNKNOWN') return false;
  const last = record.evidence.at(-1);
  if (last !== undefined && FOR_AN_OPERATOR.has(last.kind)) return true;
  return record.attempts.reconcile >= record.policy.maxReconcileLookups;
}

/** The first evidence that the server contradicted itself (C13): an UNKNOWN left to an operator. */
export function contradiction(record: ToolOperation): ToolOperation['evidence'][number] | undefined {
  return record.evidence.find((e) => e.kind === 'terminal_status_changed' || e.kind === 'result_changed');
}

/** When an operation still UNKNOWN was left to an operator: a contradiction (C13) or a hand-over. */
export function leftForAnOperatorAt(record: ToolOperation): number | null {
  if (record.state !== 'UNKNOWN') return null;
  const contradicted = contradiction(record);
  if (contradicted !== undefined) return contradicted.at;
  return handedOver(record) ? record.updatedAt : null;
}

/**
 * Each stretch in SUBMISSION_UNKNOWN/UNKNOWN, until the doubt is settled (or the end). A stretch
 * entered because the server contradicted itself (C13) is not a doubt to reconcile: it is left for
 * an operator by design, so it is not timed here.
 */
export function doubtTimes(record: ToolOperation, now: number): number[] {
  const out: number[] = [];
  let since: number | null = null;
  const contradicted = contradiction(record);
  for (const h of record.history) {
    if (contradicted !== undefined && h.at >= contradicted.at) break;
    if (DOUBT.has(h.to) && since === null) since = h.at;
    else if (!DOUBT.has(h.to) && since !== null) {
      out.push(h.at - since);
      since = null;
    }
  }
  if (since !== null) out.push((contradicted?.at ?? now) - since);
  return out;
}
