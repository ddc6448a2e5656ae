/**
 * The checkers run on every series: client invariants C1-C13 and server invariants S1-S9 (DESIGN.md)
 * as far as the trace and the final state show them, liveness, and the figures of the gate table.
 * Each violation names its invariant, so a broken variant can be asserted to fail on the right one.
 */
import { canonicalJson } from '../core/digest.js';
import { isTerminal, type TaskRecord } from '../core/task.js';
import type { Ledger } from '../executor/ledger-port.js';
import type { ToolOperation } from '../executor/operation.js';
import { DEFAULT_POLICY } from '../executor/operation.js';
import { isSettled } from '../executor/transitions.js';
import type { LedgerFacts } from './client/recording-ledger.js';
import type { FaultClass, FaultPlan } from './faults.js';
import { normalizeResult } from './network/channel.js';
import type { WireEvent, WireLog } from './network/wire-log.js';
import type { ServerFacts } from './server/facts.js';
import type { SimServer } from './server/host.js';
import type { OperationPlan } from './workload.js';
import { tasksExtSim } from './wires/tasks-ext.js';
import type { SimWire } from './wires/wire.js';
import { SIM_TOOL_SLOW_POLL } from './server/tools.js';

export const INVARIANTS = [
  'C1',
  'C2',
  'C3',
  'C4',
  'C5',
  'C6',
  'C7',
  'C8',
  'C9',
  'C10',
  'C11',
  'C12',
  'C13',
  'S1',
  'S2',
  'S3',
  'S4',
  'S5',
  'S6',
  'S7',
  'S8',
  'S9',
  'divergence',
  'liveness',
  'cancel cadence',
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  readonly invariant: Invariant;
  readonly detail: string;
}

/**
 * Status reads per operation allowed in any 1 s window: the policy floor (250 ms) allows 4 polls, plus
 * a burst of one (the immediate fetch after a terminal status, or the read after a restart), as the
 * executor's own token bucket defines its cap (`qpsBurst` 1: "never more than qps in any second, plus one").
 */
export const QPS_CAP = 1000 / DEFAULT_POLICY.minPollIntervalMs + 1;

/**
 * Longest silence allowed while a cancel is being confirmed on a tool whose server suggests a 30 s
 * poll interval: the executor's cadence is at most 1 s plus jitter, a lost request costs the 2 s
 * transport timeout and a retry at most 2 s more; 10 s is far from all of them and far below the
 * 30 s a cadence that followed the server would show (defect 7). Gaps a client must sit out
 * (Retry-After, downtime, an expiry partition) are not counted.
 */
export const CANCEL_CADENCE_MAX_GAP_MS = 10_000;

export interface SeriesMetrics {
  readonly operations: number;
  readonly divergences: number;
  readonly secondOperations: number;
  /** Submissions of a call node beyond the first that reached the server (retries, duplicates). */
  readonly duplicateSubmissions: number;
  /** Status reads of clean operations (no fault touched them), and what an ideal poller needs. */
  readonly polls: number;
  readonly idealPolls: number;
  readonly maxPollsPerSecond: number;
  readonly cancelConfirmMs: readonly number[];
  /**
   * The same stretches less the time no client could use: inside a Retry-After the server sent for
   * the operation (C6), while the server or the executor was down, and while an expiry partition
   * cut the operation's task off. What remains is the executor's own share of the confirmation.
   */
  readonly cancelConfirmOwnMs: readonly number[];
  readonly unknownReconcileMs: readonly number[];
  /**
   * The same stretches, except that one still UNKNOWN at the series end because the executor handed
   * it to an operator (`handedOver`: nothing it may send can settle it) is timed to that hand-over,
   * its last step, instead of to the series end (which only says how long the series ran after it).
   * A stretch still in doubt that was not handed over is timed to the end as in the raw figure.
   */
  readonly unknownReconcileOwnMs?: readonly number[];
  /** Stretches of `unknownReconcileOwnMs` that ended with the hand-over. */
  readonly unknownHandedOver?: number;
  /**
   * On a wire without key lookup: lost submissions the executor listed as UNKNOWN, which only an
   * operator can settle (their time to the listing is in `unknownReconcileMs`).
   */
  readonly unknownByHand?: number;
  /** Operations the executor left for an operator because the server contradicted itself (C13). */
  readonly contradictions?: number;
  readonly outboxRows: number;
  readonly outboxTraced: number;
}

/** The metrics of a series that measured nothing (one whose run threw). */
export const NO_METRICS: SeriesMetrics = {
  operations: 0,
  divergences: 0,
  secondOperations: 0,
  duplicateSubmissions: 0,
  polls: 0,
  idealPolls: 0,
  maxPollsPerSecond: 0,
  cancelConfirmMs: [],
  cancelConfirmOwnMs: [],
  unknownReconcileMs: [],
  outboxRows: 0,
  outboxTraced: 0,
};

export interface CheckInput {
  readonly ops: readonly OperationPlan[];
  readonly plan: FaultPlan;
  readonly server: SimServer;
  readonly facts: ServerFacts;
  readonly ledger: Ledger;
  readonly ledgerFacts: LedgerFacts;
  readonly log: WireLog;
  readonly principal: string;
  /** Series start (the plan's process faults are timed from it) and end, virtual ms. */
  readonly start: number;
  readonly now: number;
  readonly fired: ReadonlyMap<FaultClass, number>;
  /** The wire of the series; its own rules where it has weaker guarantees. Default the Tasks extension. */
  readonly wire?: SimWire;
}

const RECEIPTED = new Set(['ACCEPTED', 'CANCELLED_ACCEPTED', 'EXPIRED_WITH_RECEIPT', 'EFFECT_RECONCILIATION_REQUIRED']);
const DOUBT = new Set(['SUBMISSION_UNKNOWN', 'UNKNOWN']);

export async function checkSeries(input: CheckInput): Promise<{ violations: Violation[]; metrics: SeriesMetrics }> {
  const { facts, ledger, ledgerFacts, log, server, now } = input;
  const v: Violation[] = [];
  const add = (invariant: Invariant, detail: string): void => void v.push({ invariant, detail });

  // Final server view of every task ever created: readable, or its last terminal record if expired.
  const finals = new Map<string, TaskRecord | null>();
  for (const [id, meta] of facts.tasks) {
    const task = await server.store.get(meta.owner, id, now);
    finals.set(id, task ?? facts.terminal.get(id)?.task ?? null);
  }

  let divergences = 0;
  let secondOperations = 0;
  let polls = 0;
  let idealPolls = 0;
  let maxPollsPerSecond = 0;
  const cancelConfirmMs: number[] = [];
  const cancelConfirmOwnMs: number[] = [];
  const downtime: Span[] = input.plan.process
    .filter((p) => p.fault !== 'stale_epoch')
    .map((p) => ({ from: input.start + p.at, until: input.start + p.at + p.duration }));
  const unknownReconcileMs: number[] = [];
  const unknownReconcileOwnMs: number[] = [];
  let unknownHandedOver = 0;
  let unknownByHand = 0;
  let contradictions = 0;
  const wire = input.wire ?? tasksExtSim;
  const byOp = groupByOp(log.events);

  for (const op of input.ops) {
    const node = op.callNodeId;
    const record = await ledger.loadByCallNode(node);
    const receipt = await ledger.getReceipt(node);
    const tasks = facts.tasksByCallNode.get(node) ?? [];
    const events = byOp.get(node) ?? [];
    if (tasks.length > 1) {
      secondOperations += tasks.length - 1;
      add('C5', `${node}: ${tasks.length} server tasks for one call node`);
    }
    const taskId = tasks[0];
    const final = taskId === undefined ? null : (finals.get(taskId) ?? null);

    // C1: at most one receipt per call node.
    if ((ledgerFacts.receiptsWritten.get(node) ?? 0) > 1)
      add('C1', `${node}: ${ledgerFacts.receiptsWritten.get(node)} receipts`);

    // Liveness: after the faults healed every operation holds a receipt or a listed outcome.
    if (record === null) {
      add('liveness', `${node}: no operation in the ledger`);
      continue;
    }
    if (!isSettled(record.state) && record.state !== 'UNKNOWN') {
      const server =
        final === null
          ? 'no task'
          : `${final.status} epoch ${final.epoch} lease ${final.leaseOwner ?? '-'} until ${final.leaseExpiresAt === null ? '-' : final.leaseExpiresAt - now}`;
      add('liveness', `${node}: still ${record.state} (server: ${server})`);
    }

    // C11: a waiter that gave up on its budget left the operation to a later waiter, who reached
    // its end (a receipt, or an outcome listed for an operator), never a wait stopped for good.
    if (op.giveUp != null && !isSettled(record.state) && record.state !== 'UNKNOWN') {
      add('C11', `${node}: its first waiter gave up and the later one never reached the end (${record.state})`);
    }
    // C12: a synchronous answer that reached the executor is the node's receipt, as answered.
    const inline = events.find((e) => e.kind === 'answer' && e.method === 'tools/call' && e.taskId === undefined);
    if (inline !== undefined && tasks.length === 0) {
      if (record.state === 'NEVER_CREATED') add('C12', `${node}: answered synchronously but recorded NEVER_CREATED`);
      else if (receipt === null || receipt.immediate !== true || receipt.status !== 'completed') {
        add('C12', `${node}: answered synchronously but holds ${receipt === null ? 'no receipt' : receipt.status}`);
      }
    }

    // C13: the receipt is the first terminal status (and result) the server answered for the task;
    // a status or result it reported differently later is never followed.
    const changed = followedChange(receipt, taskId, events);
    if (changed !== null) add('C13', `${node}: ${changed}`);

    // Terminal-state divergence: the receipt against the server's final task.
    const diverged = divergence(record, receipt, final, tasks.length, wire);
    if (diverged !== null) {
      divergences++;
      add('divergence', `${node}: ${diverged}`);
    }

    if (receipt !== null && (receipt.status === 'completed' || receipt.status === 'failed')) {
      // C2: the accepted payload is one the wire actually delivered for this task, before acceptance.
      const want =
        receipt.status === 'completed'
          ? canonicalJson(normalizeResult(receipt.payload))
          : canonicalJson(receipt.payload);
      const seen = events.some(
        (e) => e.kind === 'answer' && e.status === receipt.status && e.payload === want && e.at <= receipt.acceptedAt,
      );
      if (!seen) add('C2', `${node}: ${receipt.status} accepted without a fetched result matching its payload`);
    }
    // C3: a cancel that won on the server is the only outcome the node may take.
    if (taskId !== undefined && facts.cancelWon.has(taskId) && receipt !== null) {
      const observed = (receipt.payload as { observedStatus?: unknown } | null)?.observedStatus;
      if (
        receipt.status === 'completed' ||
        receipt.status === 'failed' ||
        (receipt.status === 'expired' && observed !== 'cancelled')
      ) {
        add('C3', `${node}: the cancel won on the server but the node took ${receipt.status}`);
      }
    }
    // C4: every operation in doubt is queryable by its submission key and its task id.
    if (DOUBT.has(record.state)) {
      const byKey = await ledger.findBySubmissionKey(record.submissionKey);
      if (byKey?.id !== record.id) add('C4', `${node}: ${record.state} not found by its submission key`);
      if (record.taskId !== null && !(await ledger.findByTaskId(record.taskId)).some((r) => r.id === record.id)) {
        add('C4', `${node}: ${record.state} not found by its task id`);
      }
    }
    // C6: the per-operation QPS cap, and Retry-After honoured.
    const gets = events.filter((e) => e.kind === 'send' && e.method === 'tasks/get').map((e) => e.at);
    const peak = maxInWindow(gets, 1_000);
    maxPollsPerSecond = Math.max(maxPollsPerSecond, peak);
    if (peak > QPS_CAP) add('C6', `${node}: ${peak} status reads within one second (cap ${QPS_CAP})`);
    for (const throttled of events.filter((e) => e.kind === 'throttled' && e.retryAfterMs !== undefined)) {
      const early = events.find(
        (e) =>
          e.kind === 'send' &&
          e.method === 'tasks/get' &&
          e.at >= throttled.at &&
          e.id > throttled.id &&
          e.at < throttled.at + (throttled.retryAfterMs ?? 0),
      );
      if (early !== undefined)
        add('C6', `${node}: request ${early.at - throttled.at}ms after a Retry-After of ${throttled.retryAfterMs}ms`);
    }
    const clean = cleanPolls(op, record, events, final, input);
    if (clean !== null) {
      polls += clean.polls;
      idealPolls += clean.ideal;
    }
    // C9: a disconnect never becomes a server cancel.
    if (op.disconnect !== null && op.cancelAfter === null && !op.raceCancel) {
      if (events.some((e) => e.kind === 'send' && e.method === 'tasks/cancel'))
        add('C9', `${node}: cancel sent after a disconnect`);
    }
    // C10: replies only for keys the server asked, each once acknowledged.
    const asked = new Set(
      events.filter((e) => e.kind === 'answer' && e.keys !== undefined).flatMap((e) => e.keys ?? []),
    );
    for (const sent of events.filter((e) => e.kind === 'send' && e.method === 'tasks/update')) {
      for (const key of sent.keys ?? []) if (!asked.has(key)) add('C10', `${node}: reply for ${key}, never asked`);
    }
    // S9: replies the server acknowledged are durable.
    if (taskId !== undefined && final !== null && !isTerminal(final.status)) {
      const acked = ackedKeys(events);
      for (const key of acked) if (!(key in final.inputResponses)) add('S9', `${node}: acknowledged reply ${key} lost`);
    }

    // A cancel on an operation listed UNKNOWN on a wire without key lookup is confirmed as far as
    // the wire allows at the listing (the same rule as above), and one left to an operator (a server
    // that contradicted itself, C13, or nothing more to send) at the hand-over: the executor sends
    // nothing more on purpose. Elsewhere it stays open to the end. Gate seed 349967: a task reported
    // completed, then `cancelled` once its cancel was asked, listed for an operator at 9.4 s, was
    // asked 250 s of reads.
    const cancel = cancelSpan(
      record,
      wire.keyLookup || record.state !== 'UNKNOWN' ? (leftForAnOperatorAt(record) ?? now) : listedAt(record, now),
    );
    if (cancel !== null) {
      const imposed = [
        ...downtime,
        ...events.flatMap((e) =>
          e.kind === 'throttled' && e.retryAfterMs !== undefined ? [{ from: e.at, until: e.at + e.retryAfterMs }] : [],
        ),
        ...log.partitions.filter((p) => p.op === node),
      ];
      cancelConfirmMs.push(cancel.until - cancel.from);
      if (op.tool === SIM_TOOL_SLOW_POLL) {
        const gap = longestFreeGap(cancel, events, imposed);
        if (gap > CANCEL_CADENCE_MAX_GAP_MS) {
          add(
            'cancel cadence',
            `${node}: ${gap} ms without a request while its cancel was confirmed (server interval 30 s)`,
          );
        }
      }
      cancelConfirmOwnMs.push(cancel.until - cancel.from - coveredWithin(imposed, cancel));
    }
    // A wire without key lookup (2025-11-25): a submission whose answer never came can only be
    // listed for an operator. It ends UNKNOWN, is never proven NEVER_CREATED without a refusal, and
    // is never sent again (no idempotency key: a second send may be a second task, C5).
    if (!wire.keyLookup) {
      const submits = events.filter((e) => e.method === 'tools/call');
      const sent = submits.filter((e) => e.kind === 'send').length;
      const answered = submits.some((e) => e.kind === 'answer');
      const refused = submits.some((e) => e.kind === 'error');
      if (sent > 1) add('C5', `${node}: submitted ${sent} times on a wire with no idempotency key`);
      if (record.state === 'NEVER_CREATED' && !refused)
        add('C5', `${node}: NEVER_CREATED without a refusal on a wire with no key lookup`);
      if (sent > 0 && !answered && !refused && record.taskId === null && record.state !== 'UNKNOWN')
        add('C5', `${node}: its submission got no answer and it ended ${record.state}, not UNKNOWN`);
    }
    if (!wire.keyLookup && record.state === 'UNKNOWN') {
      // Without a key lookup nothing the executor may send settles an UNKNOWN (a lost submission, a
      // task id answered not found): it is settled as far as the wire allows once listed for an
      // operator, and the time to that listing is the figure.
      unknownByHand++;
      const doubt = record.history.find((h) => DOUBT.has(h.to));
      const listed = record.history.find((h) => h.to === 'UNKNOWN');
      if (doubt !== undefined && listed !== undefined) {
        unknownReconcileMs.push(listed.at - doubt.at);
        unknownReconcileOwnMs.push(listed.at - doubt.at);
      }
    } else {
      unknownReconcileMs.push(...doubtTimes(record, now));
      const handed = handedOver(record);
      if (handed) unknownHandedOver++;
      unknownReconcileOwnMs.push(...doubtTimes(record, handed ? Math.min(now, record.updatedAt) : now));
    }
    if (contradiction(record) !== undefined) contradictions++;
  }

  // C7: every outbox row traces to the node's one receipt.
  const rows = await ledger.listOutbox(10_000);
  let traced = 0;
  for (const row of rows) {
    const receipt = await ledger.getReceipt(row.callNodeId);
    if (receipt !== null && receipt.id === row.receiptId && receipt.status === row.status) traced++;
    else add('C7', `outbox row ${row.id} of ${row.callNodeId} does not trace to its receipt`);
  }

  serverChecks(input, finals, add);

  const submitted = input.log.events.filter((e) => e.kind === 'send' && e.method === 'tools/call').length;
  return {
    violations: v,
    metrics: {
      operations: input.ops.length,
      divergences,
      secondOperations,
      duplicateSubmissions: Math.max(0, submitted - input.ops.length),
      polls,
      idealPolls,
      maxPollsPerSecond,
      cancelConfirmMs,
      cancelConfirmOwnMs,
      unknownReconcileMs,
      unknownReconcileOwnMs,
      unknownHandedOver,
      ...(wire.keyLookup ? {} : { unknownByHand }),
      contradictions,
      outboxRows: rows.length,
      outboxTraced: traced,
    },
  };
}

function serverChecks(
  input: CheckInput,
  finals: Map<string, TaskRecord | null>,
  add: (i: Invariant, d: string) => void,
): void {
  const { facts, log } = input;
  // S1: a task id reaches the client only once the task was committed.
  for (const e of log.events) {
    if (e.kind === 'answer' && e.method === 'tools/call' && e.taskId !== undefined && !facts.tasks.has(e.taskId)) {
      add('S1', `create answered with ${e.taskId} before any commit`);
    }
  }
  // S2: terminal statuses never change.
  for (const [id, history] of facts.statusHistory) {
    const first = history.findIndex((s) => isTerminal(s));
    if (first >= 0 && history.length > first + 1) add('S2', `${id}: ${history.slice(first).join(' -> ')}`);
  }
  // S3: no write from a stale epoch took effect.
  for (const w of facts.staleWrites)
    add('S3', `${w.taskId}: ${w.method} from epoch ${w.epoch} accepted at epoch ${w.currentEpoch}`);
  // S4: a won cancel stays cancelled, and a late completion is never the result.
  for (const [id] of facts.cancelWon) {
    const final = finals.get(id);
    if (final !== null && final !== undefined && (final.status !== 'cancelled' || final.result !== null)) {
      add('S4', `${id}: cancel won but the task ended ${final.status}`);
    }
  }
  // S5: one task per (owner, submission key).
  const keys = new Map<string, number>();
  for (const meta of facts.tasks.values()) {
    if (meta.key === null) continue;
    const k = `${meta.owner} ${meta.key}`;
    keys.set(k, (keys.get(k) ?? 0) + 1);
  }
  for (const [k, n] of keys) if (n > 1) add('S5', `${n} tasks for key ${k}`);
  // S6: a burned key never creates.
  for (const c of facts.createdAfterBurn) add('S6', `key ${c.key} created a task after it was burned`);
  // S7: only terminal tasks disappear (TTL never deletes or fails a working one).
  for (const [id, final] of finals) {
    if (final === null) add('S7', `${id}: gone without ever being terminal`);
    else if (final.status === 'failed' && final.error?.code !== -32000)
      add('S7', `${id}: failed by the server (${final.error?.message})`);
  }
  // S8: a foreign principal learns nothing an unknown id would not tell.
  for (const id of log.s8Leaks) add('S8', `${id}: foreign principal got a different answer than an unknown id`);
}

function divergence(
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
function followedChange(
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

function groupByOp(events: readonly WireEvent[]): Map<string, WireEvent[]> {
  const out = new Map<string, WireEvent[]>();
  for (const e of events) {
    if (e.op === null) continue;
    const list = out.get(e.op) ?? [];
    list.push(e);
    out.set(e.op, list);
  }
  return out;
}

function maxInWindow(times: readonly number[], windowMs: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while ((times[hi] as number) - (times[lo] as number) >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

function ackedKeys(events: readonly WireEvent[]): string[] {
  const keys: string[] = [];
  for (const sent of events.filter((e) => e.kind === 'send' && e.method === 'tasks/update')) {
    if (events.some((e) => e.id === sent.id && e.kind === 'answer')) keys.push(...(sent.keys ?? []));
  }
  return keys;
}

/**
 * Polls of an operation no fault touched (no rule, no process fault, no input, no cancel, no
 * disconnect), against the ideal: one read per server poll interval from the acknowledgement until
 * the server's terminal instant, plus the read that sees it and the fetch.
 */
function cleanPolls(
  op: OperationPlan,
  record: ToolOperation,
  events: readonly WireEvent[],
  final: TaskRecord | null,
  input: CheckInput,
) {
  if (input.plan.process.length > 0 || input.plan.rules.some((r) => r.op === null || r.op === op.callNodeId))
    return null;
  if (op.args.ask || op.cancelAfter !== null || op.raceCancel || op.disconnect !== null) return null;
  if (final === null || final.terminalAt === null || record.state !== 'ACCEPTED') return null;
  const acked = record.history.find((h) => h.to === 'WORKING')?.at;
  if (acked === undefined) return null;
  const interval = Math.max(final.pollIntervalMs, DEFAULT_POLICY.minPollIntervalMs);
  const ideal = Math.max(0, Math.ceil((final.terminalAt - acked) / interval)) + 1;
  const polls = events.filter((e) => e.kind === 'send' && e.method === 'tasks/get').length;
  return { polls, ideal };
}

/**
 * From the first cancel request until the client knows whether the cancel won: a cancelled receipt,
 * or the terminal status that beat it (fetching that result is result retrieval, not confirmation).
 * A cancel still open at the end counts until the end.
 */
function cancelSpan(record: ToolOperation, now: number): Span | null {
  const asked = record.history.find((h) => h.to === 'CANCEL_REQUESTED');
  if (asked === undefined) return null;
  const done = record.history.find((h) => h.at >= asked.at && (RECEIPTED.has(h.to) || h.to === 'TERMINAL_OBSERVED'));
  return { from: asked.at, until: done?.at ?? Math.max(now, asked.at) };
}

/** When the record entered UNKNOWN last (or `now`). */
function listedAt(record: ToolOperation, now: number): number {
  const listed = record.history.filter((h) => h.to === 'UNKNOWN').at(-1);
  return listed?.at ?? now;
}

interface Span {
  readonly from: number;
  readonly until: number;
}

/**
 * The longest stretch of `window` with no status read or cancel sent, less the parts of it the
 * client had to wait out (`imposed`).
 */
function longestFreeGap(window: Span, events: readonly WireEvent[], imposed: readonly Span[]): number {
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
function coveredWithin(spans: readonly Span[], window: Span): number {
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
 * Each stretch in SUBMISSION_UNKNOWN/UNKNOWN, until the doubt is settled (or the end). A stretch
 * entered because the server contradicted itself (C13) is not a doubt to reconcile: it is left for
 * an operator by design, so it is not timed here.
 */
/**
 * Evidence after which no request the executor may send settles an UNKNOWN: the server cannot look
 * the key up (or the task under it is gone: an expired task's key answers `-32602`), the call went out
 * without its key (C12), the key denies a task the server acknowledged, or a synchronous answer did
 * not verify. Each is listed for an operator on purpose (README "Executor state machine and ledger").
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
function handedOver(record: ToolOperation): boolean {
  if (record.state !== 'UNKNOWN') return false;
  const last = record.evidence.at(-1);
  if (last !== undefined && FOR_AN_OPERATOR.has(last.kind)) return true;
  return record.attempts.reconcile >= record.policy.maxReconcileLookups;
}

/** The first evidence that the server contradicted itself (C13): an UNKNOWN left to an operator. */
function contradiction(record: ToolOperation): ToolOperation['evidence'][number] | undefined {
  return record.evidence.find((e) => e.kind === 'terminal_status_changed' || e.kind === 'result_changed');
}

/** When an operation still UNKNOWN was left to an operator: a contradiction (C13) or a hand-over. */
function leftForAnOperatorAt(record: ToolOperation): number | null {
  if (record.state !== 'UNKNOWN') return null;
  const contradicted = contradiction(record);
  if (contradicted !== undefined) return contradicted.at;
  return handedOver(record) ? record.updatedAt : null;
}

function doubtTimes(record: ToolOperation, now: number): number[] {
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
