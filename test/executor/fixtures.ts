import { digestOf, requestDigest } from '../../src/core/digest.js';
import type { TerminalStatus } from '../../src/core/task.js';
import type { Effect, EffectType } from '../../src/executor/effects.js';
import type { OperationEvent } from '../../src/executor/events.js';
import { next, type StepResult } from '../../src/executor/machine.js';
import { newOperation, type ToolOperation, type WireStatus } from '../../src/executor/operation.js';

export const T0 = 1_800_000_000_000;
export const RESULT = { content: [{ type: 'text', text: 'done' }] };

export function fresh(overrides: { budgetMs?: number | null; shadow?: boolean } = {}): ToolOperation {
  return newOperation({
    id: 'op-1',
    callNodeId: 'node-1',
    requestDigest: requestDigest('report', { pages: 3 }),
    tool: { name: 'report', descriptorVersion: 'v7' },
    body: { pages: 3 },
    wire: { name: 'mcp-tasks-ext', adapterVersion: '1' },
    submissionKey: 'key-1',
    executionEpoch: 0,
    now: T0,
    budgetMs: overrides.budgetMs === undefined ? 600_000 : overrides.budgetMs,
    shadow: overrides.shadow ?? false,
  });
}

/** Event builders stamped with the record's epoch and, where needed, its current poll / timer / generation. */
export const ev = {
  sent: (r: ToolOperation): OperationEvent => ({ type: 'submit_sent', epoch: r.executionEpoch }),
  acked: (r: ToolOperation, status: WireStatus = 'working', extra: object = {}): OperationEvent => ({
    type: 'submit_acked',
    epoch: r.executionEpoch,
    taskId: 'task-1',
    status,
    pollIntervalMs: 1_000,
    ...extra,
  }),
  lost: (r: ToolOperation): OperationEvent => ({ type: 'submit_lost', epoch: r.executionEpoch, reason: 'timeout' }),
  wake: (r: ToolOperation): OperationEvent => ({ type: 'wake', epoch: r.executionEpoch, dueAt: r.wakeAt ?? -1 }),
  status: (r: ToolOperation, status: WireStatus, extra: object = {}): OperationEvent => ({
    type: 'status_observed',
    epoch: r.executionEpoch,
    seq: r.pollCursor.issued,
    status,
    ...extra,
  }),
  result: (r: ToolOperation, status: TerminalStatus = 'completed', extra: object = {}): OperationEvent => ({
    type: 'result_fetched',
    epoch: r.executionEpoch,
    status,
    payload: RESULT,
    digest: digestOf(RESULT),
    truncated: false,
    malformed: false,
    ...extra,
  }),
  /** The synchronous answer to the submission (C12): `RESULT` with its digest, valid unless told. */
  answered: (r: ToolOperation, extra: object = {}): OperationEvent => ({
    type: 'submit_completed',
    epoch: r.executionEpoch,
    payload: RESULT,
    digest: digestOf(RESULT),
    valid: true,
    ...extra,
  }),
  cancel: (r: ToolOperation, expectedGeneration = r.cancelGeneration): OperationEvent => ({
    type: 'cancel_requested',
    epoch: r.executionEpoch,
    expectedGeneration,
  }),
  cancelAcked: (r: ToolOperation, status?: WireStatus): OperationEvent => ({
    type: 'cancel_acked',
    epoch: r.executionEpoch,
    generation: r.cancelGeneration,
    ...(status === undefined ? {} : { status }),
  }),
};

export type EventFor = OperationEvent | ((r: ToolOperation) => OperationEvent);

/** Applies events in order, `dt` ms apart; throws if one is not applied (use `step` to see outcomes). */
export function run(record: ToolOperation, events: readonly EventFor[], dt = 10, random = 0.5) {
  let current = record;
  let now = Math.max(T0, record.updatedAt);
  const steps: StepResult[] = [];
  for (const make of events) {
    now += dt;
    const event = typeof make === 'function' ? make(current) : make;
    const result = next(current, event, now, random);
    if (result.outcome !== 'applied') {
      throw new Error(`${event.type} in ${current.state} was ${result.outcome}: ${result.reason}`);
    }
    steps.push(result);
    current = result.record;
  }
  return { record: current, steps, now, effects: steps.flatMap((s) => s.effects) };
}

/** One step at `now` (default: just after the record's last update). */
export function step(record: ToolOperation, make: EventFor, now = record.updatedAt + 10, random = 0.5): StepResult {
  return next(record, typeof make === 'function' ? make(record) : make, now, random);
}

export function effectsOf<T extends EffectType>(effects: readonly Effect[], type: T): Extract<Effect, { type: T }>[] {
  return effects.filter((e): e is Extract<Effect, { type: T }> => e.type === type);
}

/** A record in WORKING with task `task-1` and a poll timer armed. */
export function workingRecord(overrides: Parameters<typeof fresh>[0] = {}): ToolOperation {
  return run(fresh(overrides), [ev.sent, ev.acked]).record;
}

/** A record in FETCHING_RESULT after the server reported `status`. */
export function fetchingRecord(status: TerminalStatus = 'completed'): ToolOperation {
  return run(workingRecord(), [ev.wake, (r) => ev.status(r, status), ev.wake]).record;
}

/** A record in CANCEL_REQUESTED (generation 1), the send not yet acknowledged. */
export function cancellingRecord(): ToolOperation {
  return run(workingRecord(), [ev.cancel]).record;
}
