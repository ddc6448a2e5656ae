import type { TaskStore } from '../store/port.js';
import type { TaskObserver } from '../runner/observer.js';

/** What `/readyz` reports: every check, and `ready` when all pass. */
export interface Readiness {
  readonly ready: boolean;
  readonly checks: {
    /** A read of the tasks table answered, so the store is reachable and its migrations created it. */
    readonly store: { readonly ok: boolean; readonly error?: string };
    /** The runner finished a claim pass (with or without work) within `claimWindowMs`. */
    readonly runner: {
      readonly ok: boolean;
      readonly lastClaimPassAgoMs: number | null;
      /** This node runs no tools (`serve --no-runner`): the check passes and says so. */
      readonly disabled?: true;
    };
  };
}

/** A readiness check fed by the engine's claim passes. */
export interface ReadinessProbe {
  /** Pass to the engine (with `combineObservers`): it sees the runner's claim passes. */
  readonly observer: TaskObserver;
  check(): Promise<Readiness>;
}

/** What `readinessProbe` checks and how patiently. */
export interface ReadinessOptions {
  readonly store: TaskStore;
  /** The clock the engine uses (claim passes are stamped with it). */
  readonly now: () => number;
  /** How old the last successful claim pass may be; default 10 s (40 idle passes at 250 ms). */
  readonly claimWindowMs?: number;
  /** A store read slower than this fails the check; default 2 s. */
  readonly storeTimeoutMs?: number;
  /**
   * False on a node that runs no tools (`terminus serve --no-runner`, its `terminus worker`s run
   * them): only the store is checked, since no claim pass will ever come. Default true.
   */
  readonly runner?: boolean;
}

/**
 * Readiness of one node for an orchestrator: the store answers a read, and the claim loop is alive
 * (a pass ended without error recently). A node with every slot busy still passes: its loop keeps
 * running passes that claim nothing.
 * @example
 * const readiness = readinessProbe({ store, now: () => Date.now() });
 * const engine = createEngine({ store, tools, clock, ids, observer: readiness.observer });
 * const { ready, checks } = await readiness.check();
 */
export function readinessProbe(options: ReadinessOptions): ReadinessProbe {
  const window = options.claimWindowMs ?? 10_000;
  const timeout = options.storeTimeoutMs ?? 2000;
  let lastPass: number | null = null;
  return {
    observer: {
      observe(event) {
        if (event.kind === 'claim_pass' && event.ok) lastPass = event.at;
      },
    },
    async check() {
      const store = await probeStore(options.store, options.now(), timeout);
      const now = options.now();
      const ago = lastPass === null ? null : now - lastPass;
      const runner =
        options.runner === false
          ? { ok: true, lastClaimPassAgoMs: null, disabled: true as const }
          : { ok: ago !== null && ago <= window, lastClaimPassAgoMs: ago };
      return { ready: store.ok && runner.ok, checks: { store, runner } };
    },
  };
}

async function probeStore(store: TaskStore, now: number, timeoutMs: number): Promise<Readiness['checks']['store']> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    // An id no task has: the read touches the table and answers null.
    await Promise.race([store.get('readyz', 'readyz-probe', now), expired]);
    return { ok: true };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}
