import type { TaskRecord } from '../core/task.js';
import type { TaskEvent } from '../store/events.js';
import { Execution } from './execution.js';
import { errorFields } from './logger.js';
import type { EngineSettings } from './options.js';
import { Wakeup } from './wakeup.js';

/**
 * The claim loop of one node: claims runnable tasks of its tools (new ones and ones whose lease
 * expired because their node died, which the store hands out with epoch + 1) up to `concurrency`,
 * and runs each in an `Execution`. Idle, it looks again every `claimIntervalMs`; a submit on this
 * node, a `created` event or a freed slot wakes it at once.
 */
export class Runner {
  readonly #settings: EngineSettings;
  readonly #wakeup: Wakeup;
  readonly #running = new Map<string, { readonly execution: Execution; readonly done: Promise<void> }>();
  #stop: AbortController | null = null;
  #loop: Promise<void> | null = null;
  #unsubscribe: (() => void) | null = null;

  constructor(settings: EngineSettings) {
    this.#settings = settings;
    this.#wakeup = new Wakeup(settings.clock);
  }

  get running(): number {
    return this.#running.size;
  }

  start(): void {
    if (this.#loop !== null) return;
    const stop = new AbortController();
    this.#stop = stop;
    this.#unsubscribe = this.#settings.events.subscribe((event) => this.#onEvent(event));
    this.#loop = this.#claimLoop(stop.signal);
  }

  /** Looks for work now instead of at the next interval. */
  wake(): void {
    this.#wakeup.wake();
  }

  /** Aborts the local run of `taskId`, if any (cancel on this node). */
  cancelled(taskId: string): void {
    for (const { execution } of this.#running.values()) if (execution.taskId === taskId) execution.cancel();
  }

  /** Lets the local run of `taskId` re-read its task now (a reply or a cancel) rather than at its next heartbeat. */
  inputReceived(taskId: string): void {
    for (const { execution } of this.#running.values()) {
      if (execution.taskId === taskId) void execution.refresh();
    }
  }

  /** Stops claiming, aborts every run with a shutdown reason and waits until each has released. */
  async stop(): Promise<void> {
    const loop = this.#loop;
    if (loop === null) return;
    this.#stop?.abort();
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    await loop;
    const runs = [...this.#running.values()];
    for (const { execution } of runs) execution.shutdown();
    await Promise.all(runs.map((run) => run.done));
    this.#loop = null;
    this.#stop = null;
  }

  #onEvent(event: TaskEvent): void {
    if (event.kind === 'created') this.wake();
    // Events may come from other nodes (PostgreSQL NOTIFY): re-read the task and act on what the
    // store says, so a stray event can delay nothing and abort nothing by itself. A cancel on this
    // node aborts directly through `cancelled()`.
    else if (event.kind === 'cancelled' || event.kind === 'input_received') this.inputReceived(event.taskId);
  }

  async #claimLoop(stop: AbortSignal): Promise<void> {
    const { clock, store, logger, observer, nodeId: node } = this.#settings;
    const tools = [...this.#settings.tools.keys()];
    while (!stop.aborted) {
      const free = this.#settings.concurrency - this.#running.size;
      let full = false;
      const queried = free > 0 && tools.length > 0;
      const pass = { started: clock.now(), claimed: 0, ok: true };
      if (queried) {
        try {
          const claimed = await store.claim({
            workerId: this.#settings.nodeId,
            now: clock.now(),
            leaseMs: this.#settings.leaseMs,
            limit: free,
            tools,
          });
          for (const task of claimed) this.#launch(task, stop);
          pass.claimed = claimed.length;
          // A full batch suggests more work is waiting: claim again without sleeping.
          full = claimed.length === free && !stop.aborted;
        } catch (error) {
          pass.ok = false;
          logger.warn('claim failed', errorFields(error));
        }
      }
      const at = clock.now();
      const { started, claimed, ok } = pass;
      observer.observe({ kind: 'claim_pass', at, node, queried, durationMs: at - started, claimed, ok });
      if (!full) await this.#wakeup.sleep(this.#interval(), stop);
    }
  }

  #launch(task: TaskRecord, stop: AbortSignal): void {
    const tool = this.#settings.tools.get(task.tool);
    if (tool === undefined) return; // claim is filtered by tool name; unreachable
    const { id: taskId, epoch, createdAt } = task;
    const node = this.#settings.nodeId;
    const at = this.#settings.clock.now();
    this.#settings.observer.observe({ kind: 'claimed', at, taskId, tool: tool.name, node, epoch, createdAt });
    const execution = new Execution(this.#settings, task, tool);
    const key = `${task.id}:${task.epoch}`;
    const done = execution.run().finally(() => {
      this.#running.delete(key);
      this.wake();
    });
    this.#running.set(key, { execution, done });
    // A claim that lands while stopping is handed straight back.
    if (stop.aborted) execution.shutdown();
  }

  #interval(): number {
    const base = this.#settings.claimIntervalMs;
    const random = this.#settings.random;
    // Rounded: a fractional sleep makes a virtual clock's `now()` fractional, and `now` is written to
    // STRICT INTEGER columns (Clock.now() is integer ms).
    return random === undefined ? base : Math.round(base * (0.75 + 0.5 * random.next()));
  }
}
