import { isTerminusError, TerminusError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import type { NewLogLine } from '../core/log.js';
import type { Progress, TaskRecord } from '../core/task.js';
import { isTerminal } from '../core/task.js';
import type { Fence, FinishInput } from '../store/port.js';
import { runHeartbeat } from './heartbeat.js';
import { InputBroker } from './input.js';
import { errorFields, logHandlerError, withFields } from './logger.js';
import type { EngineSettings } from './options.js';
import type { Invoked } from './handlers.js';
import { toFinish, toOutcome } from './outcome.js';
import { abortKind, cancelledReason, leaseLostReason, shutdownReason, type AbortKind } from './reasons.js';
import { withinRun, type LifecycleEvent, type RunOutcome } from './observer.js';
import { handled, TaskLogWriter } from './task-log.js';
import type { TaskContext, TaskToolDefinition } from './tool.js';

/** Why a run's heartbeat loop stops: its handler settled (read by nobody; one object for every run). */
const RUN_OVER = Object.freeze({ reason: 'the run is over' });

/** A retryable store error on the terminal write is retried this often, one heartbeat apart. */
const FINISH_ATTEMPTS = 5;

/** JSON-RPC "internal error": what a task whose outcome could not be stored fails with. */
const UNRECORDABLE_CODE = -32603;

/** NaN and Infinity have no JSON form: stored, they would become `null` and break every wire's encoder. */
export function checkProgress(done: number, total: number | undefined): void {
  if (Number.isFinite(done) && (total === undefined || Number.isFinite(total))) return;
  throw new TerminusError('invalid_argument', `progress(done, total) takes finite numbers, got (${done}, ${total})`, {
    details: { field: 'progress' },
  });
}

function messageOf(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error instanceof Error ? error.message : String(error)}${cause}`;
}

function unrecordable(reason: string): FinishInput {
  return { status: 'failed', error: { code: UNRECORDABLE_CODE, message: reason }, statusMessage: reason };
}

/**
 * One run of a handler for one claim (one epoch): builds its context, heartbeats the lease, aborts
 * the signal on cancel, lease loss or shutdown, and writes the outcome with the claim's fence.
 */
export class Execution {
  readonly fence: Fence;
  readonly #settings: EngineSettings;
  readonly #task: TaskRecord;
  readonly #tool: TaskToolDefinition;
  readonly #logger: Logger;
  readonly #abort = new AbortController();
  readonly #broker: InputBroker;
  readonly #log: TaskLogWriter;
  #leaseLost = false;
  #startedAt = 0;

  constructor(settings: EngineSettings, task: TaskRecord, tool: TaskToolDefinition) {
    this.#settings = settings;
    this.#task = task;
    this.#tool = tool;
    this.fence = { taskId: task.id, workerId: settings.nodeId, epoch: task.epoch };
    this.#logger = withFields(settings.logger, { taskId: task.id, epoch: task.epoch, tool: tool.name });
    this.#broker = new InputBroker(
      {
        signal: this.#abort.signal,
        request: (key, requestedSchema, message) => this.#requestInput(key, requestedSchema, message),
      },
      task,
    );
    this.#log = new TaskLogWriter({
      store: settings.store,
      fence: this.fence,
      limits: settings.logLimits,
      fenced: (write) => this.#fenced(write),
      appended: () => settings.events.publish({ taskId: task.id, kind: 'log' }),
      dropped: (count) => {
        const { clock, observer, nodeId: node } = settings;
        const at = clock.now();
        observer.observe({ kind: 'log_dropped', at, taskId: task.id, tool: tool.name, node, epoch: task.epoch, count });
      },
    });
  }

  get taskId(): string {
    return this.#task.id;
  }

  /** The task was cancelled (event from this or another engine): abort now. */
  cancel(): void {
    this.#abort.abort(cancelledReason(this.#task.id));
  }

  /** The node is stopping: abort; the lease is released once the handler has returned. */
  shutdown(): void {
    this.#abort.abort(shutdownReason(this.#task.id));
  }

  /** Re-reads the task (an `input_received` event) so a waiting `requestInput` sees its reply. */
  async refresh(): Promise<void> {
    const { store, clock } = this.#settings;
    try {
      const record = await store.get(this.#task.owner, this.#task.id, clock.now());
      if (record !== null) this.#observe(record);
    } catch (error) {
      this.#logger.warn('re-reading the task failed', errorFields(error));
    }
  }

  /** Runs the handler to its end and records the outcome; never rejects. */
  async run(): Promise<void> {
    this.#startedAt = this.#settings.clock.now();
    const beating = new AbortController();
    const heartbeat = runHeartbeat({
      ...this.#settings,
      logger: this.#logger,
      fence: this.fence,
      stop: beating.signal,
      onRecord: (record) => this.#observe(record),
      onLeaseLost: (error) => this.#loseLease(error),
    });
    const settled = this.#task.epoch > this.#settings.maxAttempts ? null : await this.#invoke();
    // Lines the handler wrote before it returned are stored before its outcome (a terminal task's
    // log is final), under the lease the heartbeat still holds.
    await this.#log.drain();
    // A reason of our own: abort() without one builds a DOMException (and its stack) per run.
    beating.abort(RUN_OVER);
    await heartbeat;
    try {
      if (settled === null) {
        // Earlier runs all ended without an outcome (a crash or an unrecordable write each time):
        // running the handler again would loop forever, so the task ends with the reason.
        const reason = `the task ran ${this.#task.epoch - 1} times (maxAttempts ${this.#settings.maxAttempts}) without recording an outcome`;
        this.#logger.error('giving up on the task', { reason });
        await this.#finish(unrecordable(reason));
      } else {
        await this.#conclude(settled);
      }
    } catch (error) {
      this.#logger.error('recording the outcome failed; the task runs again after its lease expires', {
        ...errorFields(error),
      });
    }
  }

  async #invoke(): Promise<Invoked> {
    // In this thread or in a worker process (EngineOptions.workers); the context stays here. The
    // run span is the active context while an in-thread handler runs (spans it makes are children).
    const scope = { taskId: this.#task.id, epoch: this.#task.epoch };
    const kill = new AbortController();
    const ended = new AbortController();
    const grace = (): void => void this.#grace(kill, ended.signal);
    if (this.#abort.signal.aborted) grace();
    else this.#abort.signal.addEventListener('abort', grace, { once: true });
    const hosted = {
      kill: kill.signal,
      writeLog: (lines: readonly NewLogLine[], skipped: number) => this.#log.writePrepared(lines, skipped),
    };
    try {
      return await withinRun(this.#settings.observer, scope, () =>
        this.#settings.handlers.invoke(this.#tool, this.#task.args, this.#context(), hosted),
      );
    } finally {
      ended.abort(RUN_OVER);
      this.#abort.signal.removeEventListener('abort', grace);
    }
  }

  /** Once the signal aborted, the handler has `abortGraceMs` to return; then its run is ended. */
  async #grace(kill: AbortController, ended: AbortSignal): Promise<void> {
    const { clock, abortGraceMs } = this.#settings;
    try {
      await clock.sleep(abortGraceMs, ended);
    } catch {
      return; // the handler returned in time
    }
    const why = abortKind(this.#abort.signal) ?? 'abort';
    kill.abort(new Error(`the handler ignored its aborted signal (${why}) for ${abortGraceMs} ms (abortGraceMs)`));
  }

  #context(): TaskContext {
    const task = this.#task;
    return {
      taskId: task.id,
      signal: this.#abort.signal,
      attempt: task.epoch,
      epoch: task.epoch,
      // Stores keep "no checkpoint" as null; the handler contract says undefined.
      lastCheckpoint: task.checkpoint === null ? undefined : task.checkpoint,
      logger: this.#logger,
      // Each promise is marked handled: a handler that does not await a call whose write fails
      // (the task was cancelled meanwhile) must not end this process with an unhandled rejection.
      progress: (done, total, message) => handled(this.#progress(done, total, message)),
      checkpoint: (data) => handled(this.#fenced((now) => this.#settings.store.checkpoint(this.fence, data, now))),
      requestInput: (requestedSchema, message) => handled(this.#broker.request(requestedSchema, message)),
      log: (text, fields) => this.#log.write('log', text, fields),
      output: (text) => this.#log.write('output', text),
    };
  }

  async #progress(done: number, total?: number, message?: string): Promise<void> {
    checkProgress(done, total);
    const progress: Progress = {
      done,
      ...(total === undefined ? {} : { total }),
      ...(message === undefined ? {} : { message }),
    };
    await this.#fenced((now) => this.#settings.store.progress(this.fence, progress, now));
    this.#settings.events.publish({ taskId: this.#task.id, kind: 'progress' });
  }

  async #requestInput(key: string, requestedSchema: Record<string, unknown>, message: string): Promise<TaskRecord> {
    const request = { method: 'elicitation/create', params: { message, requestedSchema } };
    const record = await this.#fenced((now) => this.#settings.store.requestInput(this.fence, key, request, now));
    if (Object.hasOwn(record.inputRequests, key)) {
      this.#settings.events.publish({ taskId: this.#task.id, kind: 'input_requested' });
      const { clock, observer, nodeId: node } = this.#settings;
      const { id: taskId, epoch } = this.#task;
      observer.observe({ kind: 'input_requested', at: clock.now(), taskId, tool: this.#tool.name, node, epoch, key });
    }
    return record;
  }

  /**
   * A fenced write: `lease_lost` aborts the run before the error reaches the handler, and so does
   * `already_terminal`, which is how a run learns of a cancel made by another process (its event
   * never reaches this engine) when a write comes before the next heartbeat: the run then ends as
   * cancelled, as it would at that heartbeat, not as a handler that threw.
   */
  async #fenced<T>(write: (now: number) => Promise<T>): Promise<T> {
    try {
      return await write(this.#settings.clock.now());
    } catch (error) {
      if (isTerminusError(error, 'lease_lost')) this.#loseLease(error);
      else if (isTerminusError(error, 'already_terminal')) {
        if (error.details?.['status'] === 'cancelled') this.cancel();
        else this.#loseLease(error);
      }
      throw error;
    }
  }

  #observe(record: TaskRecord): void {
    if (record.status === 'cancelled') this.cancel();
    else if (isTerminal(record.status)) this.#loseLease(undefined);
    this.#broker.observe(record);
  }

  #loseLease(cause: unknown): void {
    this.#leaseLost = true;
    this.#abort.abort(leaseLostReason(this.#task.id, this.#task.epoch, cause));
  }

  async #conclude(settled: Invoked): Promise<void> {
    const kind = abortKind(this.#abort.signal);
    if ('abandoned' in settled) {
      // On the serving thread nothing can stop a handler: the run is given up, its slot freed, and
      // the lease is left to lapse rather than released, since the handler may still be writing.
      // After leaseMs the task is claimed again (re-run, or failed past maxAttempts).
      const reason = settled.abandoned;
      this.#logger.warn(
        'giving up on a handler that ignores its aborted signal; it runs on, unstoppable on this thread',
        {
          reason,
          abort: kind ?? null,
        },
      );
      this.#ended('abandoned');
      return;
    }
    if ('crashed' in settled) return this.#crashed(settled, kind);
    if (this.#leaseLost) {
      // Another claim owns the task now; anything written from here would be a stale epoch (S3).
      this.#logger.warn('lease lost; the outcome of this run is dropped');
      this.#ended('lease_lost');
      return;
    }
    if (!settled.ok && (kind === 'cancelled' || kind === 'shutdown')) {
      // Interrupted, not finished: a cancelled task is already terminal, a shut-down one is re-run.
      await this.#release();
      this.#ended(kind);
      return;
    }
    if (!settled.ok) {
      // The task ends as a tool error or failed, so the stack is the only trace the author gets.
      logHandlerError(this.#logger, settled.error);
    }
    // A result returned despite a cancel is still written: the store keeps it as lateOutcome (S4).
    let input: FinishInput;
    try {
      input = toFinish(toOutcome(settled, this.#tool));
    } catch (error) {
      // A result that cannot even be digested (a BigInt, a cycle) can never be stored.
      await this.#finish(unrecordable(`the result could not be serialised: ${messageOf(error)}`));
      return;
    }
    try {
      await this.#finish(input);
    } catch (error) {
      // Retryable (busy, disk full): left to the next run, which may record the real outcome.
      if (error instanceof TerminusError && error.retryable) throw error;
      // The store refused this outcome for good (a value it cannot hold): record the reason
      // instead, so the task ends rather than re-running every lease (issue 12 item 3).
      const reason = `the outcome could not be recorded: ${messageOf(error)}`;
      this.#logger.error('recording the outcome failed; ending the task as failed', { reason });
      await this.#finish(unrecordable(reason));
    }
  }

  /**
   * The worker died under the handler (an uncaught throw, `process.exit`, a limit, or killed after
   * its grace). An interrupted run ends as its interruption says; a limit fails the task with the
   * reason, since a handler that outgrew its heap would do it again; any other death is a crash,
   * as of a process: no outcome, the task runs again at epoch + 1, up to maxAttempts.
   */
  async #crashed(settled: Extract<Invoked, { crashed: string }>, kind: AbortKind | undefined): Promise<void> {
    const reason = settled.crashed;
    if (this.#leaseLost || kind === 'lease_lost') {
      this.#logger.warn('the handler worker ended after its lease was lost', { reason });
      this.#ended('lease_lost');
      return;
    }
    if (kind === 'cancelled' || kind === 'shutdown') {
      this.#logger.warn(`the handler worker ended after its ${kind === 'cancelled' ? 'cancel' : 'shutdown'}`, {
        reason,
      });
      await this.#release();
      this.#ended(kind);
      return;
    }
    if (settled.overLimit) {
      this.#logger.error('the handler worker was ended by its limit; the task fails', { reason });
      await this.#finish(unrecordable(`the handler's worker process was ended: ${reason}`));
      return;
    }
    this.#logger.error('the handler worker died; the task runs again at the next claim', { reason });
    await this.#release();
    this.#ended('crashed');
  }

  async #finish(input: FinishInput): Promise<void> {
    const { store, clock, events } = this.#settings;
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await store.finish(this.fence, input, clock.now());
        if (outcome.outcome === 'recorded') {
          events.publish({ taskId: this.#task.id, kind: 'terminal' });
          this.#ended(input.status, input.status === 'completed' ? { result: input.result } : { error: input.error });
        } else {
          this.#logger.info('handler finished after the task was cancelled; kept as lateOutcome');
          this.#ended('late');
        }
        return;
      } catch (error) {
        if (isTerminusError(error, 'lease_lost')) {
          this.#logger.warn('lease lost before the outcome was written; dropped');
          this.#ended('lease_lost');
          return;
        }
        if (!(error instanceof TerminusError && error.retryable) || attempt >= FINISH_ATTEMPTS) throw error;
        this.#logger.warn('finish failed, retrying', { ...errorFields(error), attempt });
        await clock.sleep(this.#settings.heartbeatMs);
      }
    }
  }

  #ended(
    outcome: RunOutcome,
    payload: Pick<Extract<LifecycleEvent, { kind: 'run_ended' }>, 'result' | 'error'> = {},
  ): void {
    const { clock, observer, nodeId: node } = this.#settings;
    const at = clock.now();
    const { id: taskId, epoch } = this.#task;
    const runMs = at - this.#startedAt;
    observer.observe({ kind: 'run_ended', at, taskId, tool: this.#tool.name, node, epoch, runMs, outcome, ...payload });
  }

  async #release(): Promise<void> {
    try {
      await this.#settings.store.release(this.fence, this.#settings.clock.now());
    } catch (error) {
      if (!isTerminusError(error, 'lease_lost')) throw error;
    }
  }
}
