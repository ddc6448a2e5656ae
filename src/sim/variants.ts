/**
 * Deliberately broken variants of the executor and the server, for the tests that prove the gate
 * catches bugs. Each is an explicit test-only hook (a wrapped `next()` or a wrapped store) handed to
 * `runSeries`; the real code paths are never edited.
 */
import { digestOf } from '../core/digest.js';
import { isTerminusError } from '../core/errors.js';
import type { LateOutcome, TaskRecord } from '../core/task.js';
import { next as realNext, type NextFn } from '../executor/machine.js';
import type { Fence, TaskStore } from '../store/port.js';
import type { Invariant } from './checks/invariants.js';
import type { FaultClass } from './faults.js';
import type { SeriesHooks } from './series.js';
import type { ServerFacts } from './server/facts.js';

export interface BrokenVariant {
  readonly name: string;
  /** The invariant the gate must name when it catches this variant. */
  readonly breaks: Invariant;
  /** The faults that provoke it (swarm series restricted to these). */
  readonly faults: readonly FaultClass[];
  readonly hooks: SeriesHooks;
}

/** Executor: accepts completed/failed as soon as the status says so, without fetching the result. */
const acceptWithoutFetch: NextFn = (record, event, now, random) => {
  if (record.state === 'FETCHING_RESULT' && event.type === 'wake' && record.wakeAt === event.dueAt) {
    const status =
      record.lastServerStatus === 'failed'
        ? 'failed'
        : record.lastServerStatus === 'cancelled'
          ? 'cancelled'
          : 'completed';
    const payload =
      status === 'completed' ? { content: [] } : status === 'failed' ? { code: -32000, message: 'assumed' } : null;
    // An executor that never fetches keeps no first read to compare with either: without this, the
    // real machine's C13 check (the status read's inlined result against this one) refuses it.
    return realNext(
      { ...record, observedTerminal: null },
      {
        type: 'result_fetched',
        epoch: event.epoch,
        status,
        payload,
        digest: digestOf(payload),
        truncated: false,
        malformed: false,
      },
      now,
      random,
    );
  }
  const step = realNext(record, event, now, random);
  if (step.outcome === 'applied' && step.effects.some((e) => e.type === 'fetch_result')) {
    return {
      ...step,
      record: { ...step.record, wakeAt: now },
      effects: [
        ...step.effects.filter((e) => e.type !== 'fetch_result'),
        { type: 'schedule_wake', atMs: now, purpose: 'retry' },
      ],
    };
  }
  return step;
};

/** Executor: on a lost submission, resubmits at once under a new key instead of looking the old one up. */
const resubmitOnUnknown: NextFn = (record, event, now, random) => {
  if (event.type === 'submit_lost' && record.state === 'SUBMITTING') {
    const key = `${record.submissionKey}-again${record.priorSubmissionKeys.length + 1}`;
    return {
      outcome: 'applied',
      record: {
        ...record,
        submissionKey: key,
        priorSubmissionKeys: [...record.priorSubmissionKeys, record.submissionKey],
        attempts: { ...record.attempts, submit: 0 },
        updatedAt: now,
      },
      effects: [{ type: 'send_submit', submissionKey: key }],
    };
  }
  return realNext(record, event, now, random);
};

/** The poll interval of the executor that ignores the QPS cap. */
const IGNORED_CAP_POLL_MS = 20;

/**
 * Executor: polls every 20 ms whatever the server interval and the policy floor say, and records
 * that floor as 20 ms. The interpreter caps each operation's status reads by the record's floor
 * (`statusReadCap`, where every read leaves): a machine that only shortened its wakes would still
 * read at most 5 times a second, so this variant breaks the floor the cap is taken from as well.
 */
const ignoreQpsCap: NextFn = (record, event, now, random) => {
  const step = realNext(record, event, now, random);
  if (step.outcome !== 'applied') return step;
  const poll = step.effects.find((e) => e.type === 'schedule_wake' && e.purpose === 'poll');
  if (poll === undefined) return step;
  const atMs = now + IGNORED_CAP_POLL_MS;
  return {
    ...step,
    record: {
      ...step.record,
      wakeAt: atMs,
      policy: { ...step.record.policy, minPollIntervalMs: IGNORED_CAP_POLL_MS },
    },
    effects: step.effects.map((e) => (e === poll ? { type: 'schedule_wake', atMs, purpose: 'poll' } : e)),
  };
};

/**
 * Executor: a later waiter never renews the budget: its fresh deadline is dropped and the record
 * keeps the first waiter's, so an operation whose first waiter gave up stops again at once (C11).
 */
const budgetNeverRenewed: NextFn = (record, event, now, random) => {
  if (event.type === 'waiter_joined' || event.type === 'resumed' || event.type === 'rollback') {
    return realNext(record, { ...event, deadlineAt: record.policy.deadlineAt }, now, random);
  }
  return realNext(record, event, now, random);
};

/**
 * Executor: a synchronous answer to a call that offered a task is taken for a refusal, so the call
 * the server ran is recorded NEVER_CREATED and its result thrown away (C12).
 */
const syncAnswerDropped: NextFn = (record, event, now, random) => {
  if (event.type === 'submit_completed') {
    return realNext(
      record,
      { type: 'submit_rejected', epoch: event.epoch, code: 'no_task', message: 'no task in the answer' },
      now,
      random,
    );
  }
  return realNext(record, event, now, random);
};

/**
 * Executor: forgets the terminal status it observed first, so a status or a result the server
 * reports differently later is followed: a completed task rewritten to `cancelled` is accepted as
 * cancelled, a result that changed between reads is accepted as last read (C13).
 */
const followChangedTerminal: NextFn = (record, event, now, random) => {
  const forgetful = { ...record, observedTerminal: null };
  if (event.type === 'result_fetched' && record.state === 'FETCHING_RESULT') {
    return realNext({ ...forgetful, lastServerStatus: event.status }, event, now, random);
  }
  return realNext(forgetful, event, now, random);
};

/** Server: a late completion after a won cancel shows through every read as the task's outcome. */
function lateCompletionWins(store: TaskStore): TaskStore {
  const late = new Map<string, LateOutcome>();
  const show = (task: TaskRecord): TaskRecord => {
    const outcome = late.get(task.id);
    if (outcome === undefined) return task;
    return outcome.error === undefined
      ? { ...task, status: 'completed', result: (outcome.result as Record<string, unknown>) ?? { content: [] } }
      : { ...task, status: 'failed', error: outcome.error };
  };
  return {
    ...store,
    get: async (owner, id, now) => {
      const task = await store.get(owner, id, now);
      return task === null ? null : show(task);
    },
    finish: async (fence, outcome, now) => {
      const result = await store.finish(fence, outcome, now);
      if (result.outcome === 'late') late.set(fence.taskId, result.late);
      return result;
    },
  };
}

/** Server: a write from a stale epoch is re-fenced with the current lease instead of refused. */
function acceptStaleEpoch(store: TaskStore, facts: ServerFacts): TaskStore {
  const refence = async <T>(fence: Fence, now: number, write: (f: Fence) => Promise<T>): Promise<T> => {
    try {
      return await write(fence);
    } catch (error) {
      const owner = facts.tasks.get(fence.taskId)?.owner;
      if (!isTerminusError(error, 'lease_lost') || owner === undefined) throw error;
      const task = await store.get(owner, fence.taskId, now);
      if (task === null || task.leaseOwner === null) throw error;
      return write({ taskId: fence.taskId, workerId: task.leaseOwner, epoch: task.epoch });
    }
  };
  return {
    ...store,
    heartbeat: (fence, leaseMs, now) => refence(fence, now, (f) => store.heartbeat(f, leaseMs, now)),
    progress: (fence, value, now) => refence(fence, now, (f) => store.progress(f, value, now)),
    checkpoint: (fence, data, now) => refence(fence, now, (f) => store.checkpoint(f, data, now)),
    finish: (fence, outcome, now) => refence(fence, now, (f) => store.finish(f, outcome, now)),
  };
}

export const BROKEN_VARIANTS: readonly BrokenVariant[] = [
  {
    name: 'accept completed without fetching the result',
    breaks: 'C2',
    faults: [],
    hooks: { next: acceptWithoutFetch },
  },
  {
    name: 'late completion overwrites a won cancel',
    breaks: 'S4',
    faults: ['cancel_complete_race'],
    hooks: { store: lateCompletionWins },
  },
  {
    name: 'resubmit with a new key on SUBMISSION_UNKNOWN',
    breaks: 'C5',
    faults: ['submit_response_lost'],
    hooks: { next: resubmitOnUnknown },
  },
  { name: 'ignore the QPS cap', breaks: 'C6', faults: [], hooks: { next: ignoreQpsCap } },
  { name: 'accept a stale-epoch write', breaks: 'S3', faults: ['stale_epoch'], hooks: { store: acceptStaleEpoch } },
  { name: 'a waiter whose budget is never renewed', breaks: 'C11', faults: [], hooks: { next: budgetNeverRenewed } },
  { name: 'a synchronous answer dropped', breaks: 'C12', faults: [], hooks: { next: syncAnswerDropped } },
  {
    name: 'a terminal status followed after it changed',
    breaks: 'C13',
    faults: ['terminal_rewritten', 'result_changed'],
    hooks: { next: followChangedTerminal },
  },
];
