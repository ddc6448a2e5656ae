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
      /** The TTL sweep deleted `count` expired tasks (the store reports a count, not ids). */
      readonly kind: 'expired';
      readonly at: number;
      readonly count: number;
    };

/**
 * How a run ended: `completed` / `failed` (the task's outcome), `late` (the handler finished after a
 * cancel had won: kept as lateOutcome, S4), `cancelled` (aborted by a cancel), `shutdown` (released
 * for a re-run), `lease_lost` (another claim owns the task now), `crashed` (its worker thread died:
 * released for a re-run, as after a process crash).
 */
export type RunOutcome = 'completed' | 'failed' | 'late' | 'cancelled' | 'shutdown' | 'lease_lost' | 'crashed';

/** The `kind` of a lifecycle event. */
export type LifecycleKind = LifecycleEvent['kind'];

/** Receives lifecycle events. MUST NOT throw or block: it runs inside the engine's hot paths. */
export interface TaskObserver {
  observe(event: LifecycleEvent): void;
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
