/**
 * Store wrappers of the simulation.
 *
 * `recordingStore` sits directly above the real store (below any test-only variant hook) and writes
 * `ServerFacts`; it also counts calls in flight, so `settle` knows when the SQLite group commit has
 * flushed. `nodeView` is the store as one engine process sees it: `kill()` makes every later call
 * hang (a dead process writes nothing), `freeze()` holds calls until `thaw()` replays them (a
 * stalled process whose writes land late: the source of old-epoch callbacks).
 */
import { isTerminusError } from '../../core/errors.js';
import { isTerminal, type TaskRecord } from '../../core/task.js';
import type { Fence, TaskStore } from '../../store/port.js';
import type { ServerFacts } from './facts.js';
import { nodeGate } from '../node-gate.js';

export interface Counted {
  inFlight: number;
  calls: number;
}

export function recordingStore(inner: TaskStore, facts: ServerFacts, now: () => number, counter: Counted): TaskStore {
  const observe = (task: TaskRecord | null | undefined): void => {
    if (task === null || task === undefined) return;
    const history = facts.statusHistory.get(task.id) ?? [];
    if (history[history.length - 1] !== task.status) history.push(task.status);
    facts.statusHistory.set(task.id, history);
    if (isTerminal(task.status) && !facts.terminal.has(task.id)) {
      facts.terminal.set(task.id, { status: task.status, at: now(), task });
    }
    facts.inputResponses.set(task.id, new Set(Object.keys(task.inputResponses)));
  };
  const track = async <T>(run: () => Promise<T>): Promise<T> => {
    counter.inFlight++;
    counter.calls++;
    try {
      return await run();
    } finally {
      counter.inFlight--;
      counter.calls++;
    }
  };
  const fenced = async <T>(method: string, fence: Fence, run: () => Promise<T>): Promise<T> => {
    const current = facts.epochs.get(fence.taskId) ?? 0;
    try {
      const value = await track(run);
      if (fence.epoch < current) {
        facts.staleWrites.push({ taskId: fence.taskId, method, epoch: fence.epoch, currentEpoch: current, at: now() });
      }
      return value;
    } catch (error) {
      if (isTerminusError(error, 'lease_lost') && fence.epoch < (facts.epochs.get(fence.taskId) ?? 0)) {
        facts.staleRejected++;
      }
      throw error;
    }
  };

  const store: TaskStore = {
    ...inner,
    async create(input) {
      const outcome = await track(() => inner.create(input));
      if (outcome.created) {
        const callNode = typeof input.args.op === 'string' ? input.args.op : '?';
        facts.tasks.set(outcome.task.id, { owner: input.owner, key: input.submissionKey, callNode, createdAt: now() });
        facts.tasksByCallNode.set(callNode, [...(facts.tasksByCallNode.get(callNode) ?? []), outcome.task.id]);
        if (input.submissionKey !== null && facts.burnedKeys.has(`${input.owner} ${input.submissionKey}`)) {
          facts.createdAfterBurn.push({ key: input.submissionKey, at: now() });
        }
      }
      observe(outcome.task);
      return outcome;
    },
    async get(owner, id, at) {
      const task = await track(() => inner.get(owner, id, at));
      observe(task);
      return task;
    },
    async lookupKey(owner, key, at) {
      const found = await track(() => inner.lookupKey(owner, key, at));
      if (found.kind === 'never_created' && !facts.burnedKeys.has(`${owner} ${key}`)) {
        facts.burnedKeys.set(`${owner} ${key}`, now());
      }
      if (found.kind === 'found') observe(found.task);
      return found;
    },
    async cancel(owner, id, at) {
      const outcome = await track(() => inner.cancel(owner, id, at));
      if (outcome.outcome === 'cancelled') facts.cancelWon.set(id, now());
      observe(outcome.task);
      return outcome;
    },
    async respond(owner, id, responses, at) {
      const task = await track(() => inner.respond(owner, id, responses, at));
      observe(task);
      return task;
    },
    async claim(request) {
      const tasks = await track(() => inner.claim(request));
      for (const task of tasks) {
        facts.epochs.set(task.id, Math.max(facts.epochs.get(task.id) ?? 0, task.epoch));
        observe(task);
      }
      return tasks;
    },
    heartbeat: (fence, leaseMs, at) => fenced('heartbeat', fence, () => inner.heartbeat(fence, leaseMs, at)),
    progress: (fence, value, at) => fenced('progress', fence, () => inner.progress(fence, value, at)),
    checkpoint: (fence, data, at) => fenced('checkpoint', fence, () => inner.checkpoint(fence, data, at)),
    requestInput: async (fence, key, request, at) => {
      const task = await fenced('requestInput', fence, () => inner.requestInput(fence, key, request, at));
      observe(task);
      return task;
    },
    finish: async (fence, outcome, at) => {
      const result = await fenced('finish', fence, () => inner.finish(fence, outcome, at));
      if (result.outcome === 'late') facts.lateOutcomes++;
      observe(result.task);
      return result;
    },
    release: (fence, at) => fenced('release', fence, () => inner.release(fence, at)),
    sweepExpired: (at, limit) => track(() => inner.sweepExpired(at, limit)),
    sweepTombstones: (before, limit) => track(() => inner.sweepTombstones(before, limit)),
    countLive: (owner) => inner.countLive(owner),
    list: (owner, query, at) => track(() => inner.list(owner, query, at)),
    listAllOwners: (query, at) => track(() => inner.listAllOwners(query, at)),
    countByStatus: (at) => inner.countByStatus(at),
    close: () => inner.close(),
  };
  return store;
}

/** The store as one engine process sees it; see the module comment. */
export interface NodeView extends TaskStore {
  kill(): void;
  freeze(): void;
  thaw(): void;
  readonly held: number;
}

export function nodeView(inner: TaskStore): NodeView {
  const gate = nodeGate();
  const methods = Object.fromEntries(
    // Methods only: the webhook outbox (an object) is left out, the simulation delivers none.
    (Object.keys(inner) as (keyof TaskStore)[])
      .filter((name) => typeof inner[name] === 'function')
      .map((name) => [name, gate.wrap((inner[name] as (...a: unknown[]) => Promise<unknown>).bind(inner))]),
  ) as unknown as TaskStore;
  return {
    ...methods,
    // Closing is the host's business (the store outlives its engines).
    close: async () => {},
    kill: () => gate.kill(),
    freeze: () => gate.freeze(),
    thaw: () => gate.thaw(),
    get held() {
      return gate.held;
    },
  };
}
