/**
 * Status pushes of the native task front (issue 32): each task a host watches is re-read from the
 * ledger (local, never the upstream) when the executor saw it change, and its sinks get the task
 * when its status, status message, progress or open questions changed. What counts as a change:
 * - an upstream snapshot the executor's own reads decoded for the operation's task (while its id
 *   may still come, any task's; a synchronous tool's plain call has none, so no snapshot wakes it);
 * - a question of the upstream asked (`input_required`) or answered;
 * - the operation's end (its receipt, or an end without one);
 * - a change the front made itself (a cancel request), via `changed`.
 * A sink belongs to one host session (a 2025-11-25 stdio connection) or one listen stream (the
 * Tasks extension over HTTP) of the task's owner; it is dropped when that ends, or once the task
 * is terminal and pushed (nothing changes after).
 */
import { isTerminal, type TaskRecord } from '../core/task.js';
import type { Logger } from '../core/ports.js';
import type { ToolOperation } from '../executor/operation.js';
import { isSettled } from '../executor/transitions.js';
import type { BridgeOperations } from './operations.js';
import type { Questions } from './questions.js';
import type { TaskFront } from './task-front.js';

/** Receives a watched task whenever it changed. */
export type TaskSink = (task: TaskRecord) => void;

interface Watch {
  /** The upstream task id behind the operation, once known (snapshots are keyed by it). */
  upstreamTaskId: string | null;
  /**
   * No upstream task id known yet, and one may still come (not read yet, or a submission in flight
   * or in doubt): any task's snapshot may be its first, so each one re-reads the operation. False
   * once the id is known or none can come, so a snapshot only wakes the watches it can concern.
   */
  awaitsTask: boolean;
  readonly sinks: Map<TaskSink, { last: string }>;
  /** Serialises reads, so pushes leave in the order of the changes. */
  chain: Promise<void>;
  /** A read is queued behind the running one: it covers every change signalled meanwhile. */
  queued: boolean;
}

/**
 * Whether an operation with no upstream task id may still get one. A settled operation will not, nor
 * a synchronous tool's plain call (C12: recorded as sent plainly before it leaves): it names no task
 * and ends with its answer, which `onEnded` signals. (An upstream that answers a plain call with a
 * task it was not asked for is pushed at the end only.)
 */
function awaitsTask(op: ToolOperation): boolean {
  if (op.taskId !== null || isSettled(op.state)) return false;
  return !op.evidence.some((e) => e.kind === 'plain_call_sent');
}

/** What a push compares: a host needs no push for a task whose age alone moved. */
function fingerprint(task: TaskRecord): string {
  return JSON.stringify([task.status, task.statusMessage, task.progress, Object.keys(task.inputRequests)]);
}

export class TaskPushes {
  private readonly watches = new Map<string, Watch>();

  constructor(
    private readonly front: TaskFront,
    private readonly operations: BridgeOperations,
    questions: Questions,
    private readonly logger: Logger,
  ) {
    operations.onSnapshot((snapshot) => {
      for (const [operationId, watch] of this.watches) {
        // Unknown yet but may come: the read below learns it (a local ledger read).
        if (watch.awaitsTask || watch.upstreamTaskId === snapshot.taskId) this.changed(operationId);
      }
    });
    questions.onQuestion((q) => this.changed(q.operationId));
    questions.onAnswered((q) => this.changed(q.operationId));
    operations.onEnded((op) => this.changed(op.id));
  }

  /** Tasks watched now (for tests and metrics). */
  get size(): number {
    return this.watches.size;
  }

  /**
   * Pushes `operationId`'s task to `sink` on each change from now on; with `now`, also as it stands
   * (a listen stream's first notification). The caller has checked the owner. Returns the unwatch.
   */
  watch(operationId: string, sink: TaskSink, options: { readonly now?: TaskRecord } = {}): () => void {
    let watch = this.watches.get(operationId);
    if (watch === undefined) {
      watch = { upstreamTaskId: null, awaitsTask: true, sinks: new Map(), chain: Promise.resolve(), queued: false };
      this.watches.set(operationId, watch);
    }
    const state = { last: options.now === undefined ? '' : fingerprint(options.now) };
    watch.sinks.set(sink, state);
    if (options.now !== undefined) sink(options.now);
    // A change between the caller's read and this watch is not lost: read once more.
    this.changed(operationId);
    return () => this.unwatch(operationId, sink);
  }

  /** Something about the operation may have changed: re-read it and push to its sinks. */
  changed(operationId: string): void {
    const watch = this.watches.get(operationId);
    if (watch === undefined || watch.queued) return;
    watch.queued = true;
    watch.chain = watch.chain
      .then(async () => {
        watch.queued = false;
        const op = await this.operations.deps.ledger.load(operationId);
        if (op === null) return;
        watch.upstreamTaskId = op.taskId;
        watch.awaitsTask = awaitsTask(op);
        const task = await this.front.recordOf(op);
        const print = fingerprint(task);
        for (const [sink, state] of watch.sinks) {
          if (state.last === print) continue;
          state.last = print;
          sink(task);
        }
        // Nothing changes after a terminal status: the watch has done its work.
        if (isTerminal(task.status)) this.watches.delete(operationId);
      })
      .catch((error: unknown) => {
        watch.queued = false;
        this.logger.debug('task push read failed', { operationId, error: String(error) });
      });
  }

  private unwatch(operationId: string, sink: TaskSink): void {
    const watch = this.watches.get(operationId);
    if (watch === undefined) return;
    watch.sinks.delete(sink);
    if (watch.sinks.size === 0) this.watches.delete(operationId);
  }
}
