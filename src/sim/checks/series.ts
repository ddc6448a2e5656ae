/**
 * The checkers run on every series: client invariants C1-C13 and server invariants S1-S9 (docs/guarantees.md)
 * as far as the trace and the final state show them, liveness, and the figures of the gate table.
 */
import { canonicalJson } from '../../core/digest.js';
import { isTerminal, type TaskRecord } from '../../core/task.js';
import { isSettled } from '../../executor/transitions.js';
import type { WireEvent } from '../network/wire-log.js';
import { SIM_TOOL_SLOW_POLL } from '../server/tools.js';
import { normalizeResult } from '../wires/payload.js';
import { tasksExtSim } from '../wires/tasks-ext.js';
import { divergence, followedChange } from './divergence.js';
import type { CheckInput } from './input.js';
import { CANCEL_CADENCE_MAX_GAP_MS, QPS_CAP, type Invariant, type Violation } from './invariants.js';
import type { SeriesMetrics } from './metrics.js';
import { cleanPolls, maxInWindow } from './polls.js';
import { serverChecks } from './server.js';
import {
  cancelSpan,
  contradiction,
  coveredWithin,
  DOUBT,
  doubtTimes,
  handedOver,
  leftForAnOperatorAt,
  listedAt,
  longestFreeGap,
  type Span,
} from './spans.js';

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

function ackedKeys(events: readonly WireEvent[]): string[] {
  const keys: string[] = [];
  for (const sent of events.filter((e) => e.kind === 'send' && e.method === 'tasks/update')) {
    if (events.some((e) => e.id === sent.id && e.kind === 'answer')) keys.push(...(sent.keys ?? []));
  }
  return keys;
}
