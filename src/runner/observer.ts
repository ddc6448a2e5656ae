import type { RpcError, TaskStatus, WireName } from '../core/task.js';

/**
 * What happened to a task, as the engine and its runner see it: the one feed that lifecycle logs,
 * metrics, traces, readiness and the console's timeline are built from. The runner emits these
 * through the `observer` option of `createEngine`; it knows nothing of what consumes them.
 *
 * Payload fields (`args`, `result`, `error.message`) are carried as they are; each consumer decides
 * whether to show them (logs only with `payloads: true`).
 */
export type LifecycleEvent =
  | {
      readonly kind: 'created';
      readonly at: number;
      readonly taskId: string;
      readonly tool: string;
      readonly wire: WireName;
      readonly owner: string;
      readonly args: Record<string, unknown>;
    }
  | {
      /** A claim by `node` at `epoch`; `epoch > 1` is a re-claim after the previous claim's lease ran out. */
      readonly kind: 'claimed';
      readonly at: number;
      readonly taskId: string;
      readonly tool: string;
      readonly node: string;
      readonly epoch: number;
      readonly createdAt: number;
      /**
       * The node whose lease this claim replaced (from the store's claim): on a re-claim the node
       * that died or stalled; null on a first claim and after a release (shutdown) or a stale-run
       * handback, where nobody held the lease.
       */
      readonly previousNode: string | null;
    }
  | {
      /** One pass of the claim loop (with `claimed: 0` when nothing was runnable or no slot was free). */
      readonly kind: 'claim_pass';
      readonly at: number;
      readonly node: string;
      /** False when no slot was free (or the node has no tools): no query ran, `durationMs` is 0. */
      readonly queried: boolean;
      readonly durationMs: number;
      readonly claimed: number;
      readonly ok: boolean;
    }
  | {
      readonly kind: 'input_requested';
      readonly at: number;
      readonly taskId: string;
      readonly tool: string;
      readonly node: string;
      readonly epoch: number;
      readonly key: string;
    }
  | {
      readonly kind: 'input_answered';
      readonly at: number;
      readonly taskId: string;
      readonly tool: string;
      readonly keys: readonly string[];
      readonly status: TaskStatus;
    }
  | {
      /** `won`: the task is cancelled by this request; `lost`: it was already terminal (`status`). */
      readonly kind: 'cancel_requested';
      readonly at: number;
      readonly taskId: string;
      readonly tool: string;
      readonly outcome: 'won' | 'lost';
      readonly status: TaskStatus;
    }
  | {
      /** A handler run ended. `outcome` says how, `runMs` is this run's (this epoch's) time. */
      readonly kind: 'run_ended';
      readonly at: number;
      readonly taskId: string;
      readonly tool: string;
      readonly node: string;
      readonly epoch: number;
      readonly runMs: number;
      readonly outcome: RunOutcome;
      readonly result?: Record<string, unknown>;
      readonly error?: RpcError;
    }
  | {
      /**
       * A handler wrote task log lines faster than the store took them: `count` of the oldest
       * waiting lines were dropped before they were stored (counted in the task's `dropped`).
       */
      readonly kind: 'log_dropped';
      readonly at: number;
      readonly taskId: string;
      readonly tool: string;
      readonly node: string;
      readonly epoch: number;
      readonly count: number;
    }
  | {
      /** The TTL sweep deleted `count` expired tasks (the store reports a count, not ids). */
      readonly kind: 'expired';
      readonly at: number;
      readonly count: number;
    };

/**
 * How a run ended: `completed` / `failed` (the task's outcome), `late` (the handler finished after a
 * cancel had won: kept as lateOutcome, S4), `cancelled` (aborted by a cancel), `shutdown` (released
 * for a re-run), `lease_lost` (another claim owns the task now), `crashed` (its worker process died:
 * released for a re-run, as after a process crash), `abandoned` (a handler on the serving thread
 * ignored its aborted signal past the grace period: given up, its lease left to lapse).
 */
export type RunOutcome =
  'completed' | 'failed' | 'late' | 'cancelled' | 'shutdown' | 'lease_lost' | 'crashed' | 'abandoned';

/** The `kind` of a lifecycle event. */
export type LifecycleKind = LifecycleEvent['kind'];

/** Receives lifecycle events. MUST NOT throw or block: it runs inside the engine's hot paths. */
export interface TaskObserver {
  observe(event: LifecycleEvent): void;
  /**
   * Runs one handler run (`fn`, the handler call) inside what the observer holds for that run: the
   * engine calls it right after the `claimed` event of the same task and epoch. MUST call `fn` once,
   * synchronously, and return what it returns (tracing makes the run span the active context here,
   * so spans the handler makes are its children).
   */
  within?<T>(run: RunScope, fn: () => T): T;
}

/** Which handler run `TaskObserver.within` wraps. */
export interface RunScope {
  readonly taskId: string;
  readonly epoch: number;
}

/**
 * Calls `fn` inside `observer.within` (or plainly, for an observer without one).
 * @example
 * const result = withinRun(settings.observer, { taskId, epoch }, () => tool.handler(args, ctx));
 */
export function withinRun<T>(observer: TaskObserver, run: RunScope, fn: () => T): T {
  return observer.within === undefined ? fn() : observer.within(run, fn);
}

/** The default observer: ignores every event. */
export const silentObserver: TaskObserver = { observe() {} };

/**
 * One observer that hands every event to each of `observers`, in order; one that throws does not stop the rest.
 * @example
 * const engine = createEngine({
 *   store, tools, clock, ids,
 *   observer: combineObservers(lifecycleLog({ logger }), metrics.observer, taskTracing(), readiness.observer),
 * });
 */
export function combineObservers(...observers: readonly (TaskObserver | undefined)[]): TaskObserver {
  const list = observers.filter((o): o is TaskObserver => o !== undefined);
  return {
    within<T>(run: RunScope, fn: () => T): T {
      // The first observer's scope encloses the next one's; the handler runs innermost.
      const wrapped = list.reduceRight<() => T>((inner, observer) => () => withinRun(observer, run, inner), fn);
      return wrapped();
    },
    observe(event) {
      for (const observer of list) {
        try {
          observer.observe(event);
        } catch {
          // An observer's failure must not fail a task write that already committed.
        }
      }
    },
  };
}
