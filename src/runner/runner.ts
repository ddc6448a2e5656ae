import type { TaskRecord } from '../core/task.js';
import type { TaskEvent } from '../store/events.js';
import { Execution } from './execution.js';
import { errorFields } from './logger.js';
import type { EngineSettings } from './options.js';
import { Wakeup } from './wakeup.js';

/**
 * A run slot held for a task that is being created with this node's lease (create and claim in
 * one commit, `NewTask.lease`). Exactly one of the two is called, once the create has settled.
 */
export interface RunSlot {
  /** The create committed with this node's lease: run the task now. */
  launch(task: TaskRecord): void;
  /** The create did not take the lease (an existing task for its key, a refusal, an error). */
  release(): void;
}

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
  /** Slots promised to creates in flight (create and claim in one commit). */
  readonly #slots = new Set<Promise<void>>();
  /** Slots a claim in flight may fill: counted so running handlers never exceed `concurrency`. */
  #claiming = 0;
  /**
   * Someone asked for a claim (a task created unleased, a `created` event) that a full node could
   * not make. Only then does a finished run wake the loop: with new tasks arriving leased, a claim
   * after every finish would find nothing, and while it commits `reserve()` has to refuse.
   */
  #wanted = true;
  #stop: AbortController | null = null;
  /** The handler host can take runs (worker processes loaded); until then nothing is claimed. */
  #hostUp = false;
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
    const starting = this.#settings.handlers.start();
    this.#hostUp = starting === null;
    this.#loop = starting === null ? this.#claimLoop(stop.signal) : this.#startThenClaim(starting, stop.signal);
  }

  async #startThenClaim(starting: Promise<void>, stop: AbortSignal): Promise<void> {
    try {
      await starting;
    } catch (error) {
      // A tools module that does not load or lacks a tool: no run could ever start here, so this
      // node claims nothing and its tasks wait for a node that can run them.
      this.#settings.logger.error('handler workers did not start; this node runs no task', errorFields(error));
      return;
    }
    this.#hostUp = true;
    await this.#claimLoop(stop);
  }

  /**
   * Holds a slot for a task about to be created with this node's lease, or null when none is free
   * or the runner is not running (then the create takes no lease and a claim picks the task up).
   * Saves the claim's commit: one fsync of three per task (issue 14 item 4).
   */
  reserve(): RunSlot | null {
    const stop = this.#stop?.signal;
    if (stop === undefined || stop.aborted || !this.#hostUp) return null;
    // While a claim commits its batch counts in full (it may return that many): the submit then
    // creates its task unleased and wakes the loop, the three-commit path, never an overcommit.
    if (this.#running.size + this.#slots.size + this.#claiming >= this.#settings.concurrency) return null;
    let settle: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    this.#slots.add(settled);
    const give = (): boolean => {
      if (!this.#slots.delete(settled)) return false;
      settle();
      return true;
    };
    return {
      launch: (task) => {
        if (give()) this.#launch(task, stop);
      },
      release: () => {
        if (give()) this.#freed();
      },
    };
  }

  /** Looks for work now instead of at the next interval. */
  wake(): void {
    this.#wanted = true;
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
    // A create holding a slot may still commit with our lease: its run starts and is shut down.
    await Promise.all([...this.#slots]);
    const runs = [...this.#running.values()];
    for (const { execution } of runs) execution.shutdown();
    await Promise.all(runs.map((run) => run.done));
    this.#hostUp = false;
    await this.#settings.handlers.close();
    this.#loop = null;
    this.#stop = null;
  }

  #onEvent(event: TaskEvent): void {
    // A task created with this node's lease is already running here: no claim to make for it.
    if (event.kind === 'created') {
      if (!this.#runs(event.taskId)) this.wake();
    }
    // Events may come from other nodes (PostgreSQL NOTIFY): re-read the task and act on what the
    // store says, so a stray event can delay nothing and abort nothing by itself. A cancel on this
    // node aborts directly through `cancelled()`.
    else if (event.kind === 'cancelled' || event.kind === 'input_received') this.inputReceived(event.taskId);
  }

  async #claimLoop(stop: AbortSignal): Promise<void> {
    const { clock, store, logger, observer, nodeId: node } = this.#settings;
    const tools = [...this.#settings.tools.keys()];
    while (!stop.aborted) {
      const free = this.#settings.concurrency - this.#running.size - this.#slots.size;
      let full = false;
      const queried = free > 0 && tools.length > 0;
      const pass = { started: clock.now(), claimed: 0, ok: true };
      if (queried) {
        // This claim answers every wish made so far; one made while it commits stays.
        this.#wanted = false;
        this.#claiming = free;
        try {
          const claimed = await store.claim({
            workerId: this.#settings.nodeId,
            now: clock.now(),
            leaseMs: this.#settings.leaseMs,
            limit: free,
            tools,
          });
          this.#claiming = 0;
          for (const task of claimed) this.#launch(task, stop);
          pass.claimed = claimed.length;
          // A full batch suggests more work is waiting: claim again without sleeping.
          full = claimed.length === free && !stop.aborted;
          if (full) this.#wanted = true;
        } catch (error) {
          this.#wanted = true;
          pass.ok = false;
          logger.warn('claim failed', errorFields(error));
        } finally {
          this.#claiming = 0;
        }
      }
      const at = clock.now();
      const { started, claimed, ok } = pass;
      observer.observe({ kind: 'claim_pass', at, node, queried, durationMs: at - started, claimed, ok });
      if (!full) await this.#wakeup.sleep(this.#interval(), stop);
    }
  }

  #runs(taskId: string): boolean {
    for (const { execution } of this.#running.values()) if (execution.taskId === taskId) return true;
    return false;
  }

  /** `previousLeaseOwner` comes with a claim (null when created leased: nobody held it before). */
  #launch(task: TaskRecord & { readonly previousLeaseOwner?: string | null }, stop: AbortSignal): void {
    const tool = this.#settings.tools.get(task.tool);
    if (tool === undefined) return; // claim is filtered by tool name; unreachable
    const { id: taskId, epoch, createdAt } = task;
    const node = this.#settings.nodeId;
    const at = this.#settings.clock.now();
    const previousNode = task.previousLeaseOwner ?? null;
    this.#settings.observer.observe({
      kind: 'claimed',
      at,
      taskId,
      tool: tool.name,
      node,
      epoch,
      createdAt,
      previousNode,
    });
    const execution = new Execution(this.#settings, task, tool);
    const key = `${task.id}:${task.epoch}`;
    const done = execution.run().finally(() => {
      this.#running.delete(key);
      this.#freed();
    });
    this.#running.set(key, { execution, done });
    // A claim that lands while stopping is handed straight back.
    if (stop.aborted) execution.shutdown();
  }

  /** A slot came free: claim now if a claim was wanted, else at the next interval. */
  #freed(): void {
    if (this.#wanted) this.#wakeup.wake();
  }

  #interval(): number {
    const base = this.#settings.claimIntervalMs;
    const random = this.#settings.random;
    // Rounded: a fractional sleep makes a virtual clock's `now()` fractional, and `now` is written to
    // STRICT INTEGER columns (Clock.now() is integer ms).
    return random === undefined ? base : Math.round(base * (0.75 + 0.5 * random.next()));
  }
}
