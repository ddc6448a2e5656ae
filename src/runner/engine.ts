import { taskNotFound } from '../core/errors.js';
import type { TaskRecord } from '../core/task.js';
import type { TaskEngine } from './engine-port.js';
import { runInline } from './inline.js';
import { readTaskEvents } from './read-events.js';
import { readTaskLog } from './read-log.js';
import { resolveOptions, type EngineOptions } from './options.js';
import { combineObservers } from './observer.js';
import { DurationEstimates, suggestPollInterval } from './poll-interval.js';
import { Runner } from './runner.js';
import { submitTask } from './submit.js';
import { runSweeper } from './sweeper.js';
import { waitForChange } from './wait.js';

export type { EngineOptions } from './options.js';

/**
 * Creates the task engine of one node: the commands the wires call, a runner that claims and runs
 * this node's tools under a lease, and the TTL sweeper. Nothing runs until `start()`; `stop()`
 * leaves no timer behind.
 *
 * Defaults: leaseMs 10 s, heartbeatMs leaseMs / 3, claimIntervalMs 250 ms, concurrency 16,
 * sweepIntervalMs 60 s, defaultTtlMs 1 h, defaultPollIntervalMs 1 s.
 * @example
 * const engine = createEngine({ store, tools: [report], clock: systemClock, ids: systemIds });
 * engine.start();
 * const { task } = await engine.submit({ owner: 'alice', tool: 'report', args: { pages: 3 }, wire: 'mcp-tasks-ext' });
 * const done = await engine.waitForChange('alice', task.id, { sinceUpdatedAt: task.updatedAt, timeoutMs: 30_000 });
 * await engine.stop();
 */
export function createEngine(options: EngineOptions): TaskEngine {
  const resolved = resolveOptions(options);
  // Every run end of this node feeds its tool's duration estimate, which the poll interval adapts to.
  const estimates = new DurationEstimates();
  const settings = {
    ...resolved,
    observer: combineObservers(resolved.observer, {
      observe: (e) => e.kind === 'run_ended' && estimates.observe(e.tool, e.runMs, e.outcome),
    }),
  };
  const { store, clock, events, observer } = settings;
  const runner = new Runner(settings);
  let sweeper: { readonly stop: AbortController; readonly done: Promise<void> } | null = null;

  /** The task as the wires show it: its poll interval adapted to its tool and age (`poll-interval.ts`). */
  const paced = <T extends TaskRecord>(task: T): T => {
    const pollIntervalMs = suggestPollInterval(
      task,
      clock.now(),
      estimates.estimate(task.tool),
      settings.maxPollIntervalMs,
    );
    return pollIntervalMs === task.pollIntervalMs ? task : { ...task, pollIntervalMs };
  };

  const get = async (owner: string, id: string) => {
    const task = await store.get(owner, id, clock.now());
    if (task === null) throw taskNotFound();
    return paced(task);
  };

  return {
    tools: settings.tools,
    events,

    async submit(command) {
      // A free slot here: create the task claimed by this node, in the same commit (NewTask.lease).
      const slot = runner.reserve();
      let outcome;
      try {
        const lease = slot === null ? undefined : { workerId: settings.nodeId, leaseMs: settings.leaseMs };
        outcome = await submitTask(settings, command, lease);
      } catch (error) {
        slot?.release();
        throw error;
      }
      // Created: it holds our lease (an existing task for the key was returned untouched).
      const leased = slot !== null && outcome.created;
      if (leased) slot.launch(outcome.task);
      else slot?.release();
      if (outcome.created) {
        // Created leased: run here, so no other node has a claim to make for it.
        events.publish({ taskId: outcome.task.id, kind: 'created', ...(leased ? { local: true } : {}) });
        const { id: taskId, tool, wire, owner, args, createdAt: at } = outcome.task;
        observer.observe({ kind: 'created', at, taskId, tool, wire, owner, args });
        if (!leased) runner.wake();
      }
      return { ...outcome, task: paced(outcome.task) };
    },

    runInline: (command) => runInline(settings, command),

    get,

    async cancel(owner, id) {
      // The event carries the instant the store recorded (a won cancel's terminalAt), not a later one.
      const at = clock.now();
      const outcome = await store.cancel(owner, id, at);
      if (outcome.outcome === 'cancelled') {
        // Direct call too: the run must abort even if `events` is a lossy cross-node bridge.
        runner.cancelled(id);
        events.publish({ taskId: id, kind: 'cancelled' });
      }
      const { tool, status } = outcome.task;
      const won = outcome.outcome === 'cancelled' ? 'won' : 'lost';
      observer.observe({ kind: 'cancel_requested', at, taskId: id, tool, outcome: won, status });
      return outcome;
    },

    async respond(owner, id, responses) {
      const at = clock.now();
      const task = await store.respond(owner, id, responses, at);
      runner.inputReceived(id);
      events.publish({ taskId: id, kind: 'input_received' });
      const keys = Object.keys(responses);
      observer.observe({
        kind: 'input_answered',
        at,
        taskId: id,
        tool: task.tool,
        keys,
        status: task.status,
      });
      return task;
    },

    list: async (owner, query) => {
      const page = await store.list(owner, query, clock.now());
      return { ...page, tasks: page.tasks.map(paced) };
    },
    listAllOwners: (query) => store.listAllOwners(query, clock.now()),

    lookupKey: (owner, submissionKey) => store.lookupKey(owner, submissionKey, clock.now()),

    readLog: (owner, id, query) => readTaskLog(settings, owner, id, query),

    // The page's task as a read shows it: its poll interval adapted, so a follower by events paces as one by reads.
    readEvents: async (owner, id, query) => {
      const page = await readTaskEvents(settings, owner, id, query);
      return { ...page, task: paced(page.task) };
    },

    async waitForChange(owner, id, options) {
      store.callerWaiting?.(true);
      try {
        return await waitForChange(settings, id, () => get(owner, id), options);
      } finally {
        store.callerWaiting?.(false);
      }
    },

    start() {
      runner.start();
      if (sweeper === null) {
        const stop = new AbortController();
        sweeper = { stop, done: runSweeper(settings, settings.sweepIntervalMs, stop.signal) };
      }
    },

    async stop() {
      const sweeping = sweeper;
      sweeper = null;
      sweeping?.stop.abort();
      await Promise.all([runner.stop(), sweeping?.done]);
    },
  };
}
