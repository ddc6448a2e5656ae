/**
 * The interpreter of one operation: the only place the executor does I/O for it. Events are stepped
 * one at a time (a per-operation queue); an applied step is persisted (`Ledger.apply`, or
 * `Ledger.acceptTerminal` when it carries `accept_terminal`) BEFORE any of its effects is performed;
 * effects become wire requests (`interpreter-requests.ts`: each behind the executor-wide token
 * bucket), timers on the injected clock, approval-gate calls, and their answers come back as events.
 * The step function is the context's `next`: the machine's own, or in the simulation a deliberately
 * broken variant, so the gate's variants run through this same interpreter. Given the same clock,
 * random, ids and wire answers, it takes the same steps.
 */
import { digestOf } from '../core/digest.js';
import { isTerminusError } from '../core/errors.js';
import { mustBeDurable } from './durability.js';
import type { Ids, Random } from '../core/ports.js';
import type { Effect } from './effects.js';
import type { OperationEvent } from './events.js';
import type { ApprovalRequest } from './executor-types.js';
import { ExecutorError } from './executor-types.js';
import { terminalHeard } from './interpreter-answers.js';
import { WireRequests, type RequestContext } from './interpreter-requests.js';
import { StatusFeed } from './interpreter-status.js';
import type { Ledger, Receipt } from './ledger-port.js';
import type { NextFn, StepResult } from './machine.js';
import type { ToolOperation } from './operation.js';
import { isReceipted, isSettled } from './transitions.js';
import type { ClientWire, ResultAnswer, WireFailure } from './wire-port.js';

export interface DriverContext extends RequestContext {
  readonly ledger: Ledger;
  readonly random: Random;
  readonly ids: Ids;
  /** The operation machine's step function: `next` of `machine.ts` (a broken variant in the simulation). */
  readonly next: NextFn;
  readonly approvalGate: (request: ApprovalRequest) => Promise<unknown>;
  readonly resubmitNeverCreated: boolean;
  /** A receipt was written (or found) for this operation: wake the outbox. */
  onReceipt(receipt: Receipt): void;
}

type EventSource = OperationEvent | ((record: ToolOperation) => OperationEvent);

/** States in which a pushed status may bring a read forward (or will again, after an input round). */
const LISTENED: readonly ToolOperation['state'][] = ['WORKING', 'INPUT_REQUIRED', 'CANCEL_REQUESTED'];

/** Tries of one step against other executors' writes to the record (revision conflicts). */
const MAX_STEP_ATTEMPTS = 16;

/** Why a NEVER_CREATED operation's waiters are let go: the evidence that settled it, when it says. */
function neverCreated(r: ToolOperation): string {
  const why = r.evidence.findLast((e) => e.kind === 'submit_rejected' || e.kind === 'input_asked_again');
  return `operation ${r.id} was never created on the server${why === undefined ? '' : `: ${why.detail}`}`;
}

export class OperationDriver {
  record: ToolOperation;
  readonly status: StatusFeed;
  private readonly ctx: DriverContext;
  private bound: ClientWire;
  private readonly abort = new AbortController();
  private readonly requests: WireRequests;
  private readonly tasks = new Set<Promise<void>>();
  private queue: Promise<unknown> = Promise.resolve();
  private timer: AbortController | null = null;
  /** Questions before the approval gate now, as `round key`: never asked twice at once. */
  private readonly asking = new Set<string>();
  private receipt: Receipt | null = null;
  private failure: ExecutorError | null = null;
  private waiters: { resolve(receipt: Receipt): void; reject(error: ExecutorError): void }[] = [];
  private stopped = false;
  /** A cancel asked for before the server acknowledged the submission: sent once it does. */
  private cancelOwed = false;
  /** Stops the wire's push stream for this task (listening while it is waited on). */
  private unwatch: (() => void) | null = null;
  /** The server refused the credentials: what the waiters are told (NEVER_CREATED, or the stop). */
  private credentialsRefused: ExecutorError | null = null;

  /**
   * `takenUp`: the record comes from the ledger, not from a submission of this process. Whoever
   * drove it before (an executor that crashed, another process) may have read its status in the
   * last second, and that window was in its memory: this driver counts it as full, so its first
   * status read waits one window (C6: gate seed 467954, two reads before a crash and four after).
   */
  constructor(record: ToolOperation, wire: ClientWire, ctx: DriverContext, takenUp = false) {
    this.record = record;
    this.bound = wire;
    this.ctx = ctx;
    this.status = new StatusFeed(record, ctx.clock);
    this.requests = new WireRequests(this, ctx, this.abort.signal);
    if (takenUp) this.requests.fillReadWindow();
  }

  /** The connection the operation is driven over (`rebind` moves it). */
  get wire(): ClientWire {
    return this.bound;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Performs the effects owed by a record that was just created or loaded (persisted already). */
  start(effects: readonly Effect[]): void {
    this.perform(effects);
  }

  /** Queues an event; resolves with the step (null when the driver stopped or the write failed). */
  dispatch(source: EventSource): Promise<StepResult | null> {
    const turn = this.queue.then(() => this.step(source));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  result(): Promise<Receipt> {
    if (this.receipt !== null) return Promise.resolve(this.receipt);
    if (this.failure !== null) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Stops every local activity of this operation (never a server cancel, C9). */
  async stop(reason: ExecutorError): Promise<void> {
    this.halt(reason);
    await Promise.allSettled([...this.tasks]);
  }

  /** A pushed status hint for this operation's task: it may bring the next poll forward, nothing else. */
  hint(status: ToolOperation['lastServerStatus']): void {
    if (status === null) return;
    void this.dispatch({ type: 'notification', epoch: this.ctx.epoch, status });
  }

  /** The wire received the task's terminal outcome unasked: kept at once, and read for (C13, C2). */
  heard(outcome: ResultAnswer): void {
    void this.dispatch(terminalHeard(outcome, this.ctx.epoch));
    this.hint(outcome.status);
  }

  /** Drives the operation over `wire` from now on (the old one's connection ended: a stdio child exited). */
  rebind(wire: ClientWire): void {
    this.unwatch?.();
    this.unwatch = null;
    this.bound = wire;
    // A read on the old connection no longer holds back the one `resumed` sends on this one.
    this.requests.rebound();
    this.follow();
  }

  /**
   * Listens for pushes about the task while it is waited on (a pushed status only brings the next
   * poll forward: the state is read before anything is acted on), and stops once it is not.
   */
  private follow(): void {
    const r = this.record;
    const waited = r.waitingStoppedAt === null || r.state === 'CANCEL_REQUESTED';
    const listen = !this.stopped && this.receipt === null && r.taskId !== null && waited && LISTENED.includes(r.state);
    if (listen && this.unwatch === null && r.taskId !== null) this.unwatch = this.wire.watchTask?.(r.taskId) ?? null;
    if (!listen && this.unwatch !== null) {
      this.unwatch();
      this.unwatch = null;
    }
  }

  markCancelOwed(): void {
    this.cancelOwed = true;
  }

  /**
   * The server refused the credentials (HTTP 401/403): the request did nothing, and nothing this
   * executor sends with the same credentials will. A refused submission is recorded as such (its
   * answer proves nothing was created) and its waiters learn why. After any other request the
   * waiter stops waiting, as on a disconnect (C9: the state stays, the record says nobody waits),
   * and this driver stops; a waiter with other credentials takes the operation up again.
   */
  refused(failure: WireFailure, submission: boolean): void {
    const error = new ExecutorError(
      'unauthorized',
      `operation ${this.record.id}: ${this.record.server ?? 'the server'} refused the credentials (${failure.message})`,
      { state: this.record.state, cause: failure },
    );
    const first = this.credentialsRefused === null;
    this.credentialsRefused ??= error;
    if (submission || !first) return;
    void this.dispatch({ type: 'budget_exhausted', epoch: this.ctx.epoch, reason: 'disconnect' }).finally(() =>
      this.halt(error),
    );
  }

  private halt(reason: ExecutorError): void {
    if (!this.stopped) {
      this.stopped = true;
      this.abort.abort(reason);
      this.timer?.abort();
    }
    this.follow();
    this.fail(reason);
    this.status.end();
  }

  private async step(source: EventSource): Promise<StepResult | null> {
    for (let attempt = 0; attempt < MAX_STEP_ATTEMPTS && !this.stopped; attempt++) {
      const base = this.record;
      const event = typeof source === 'function' ? source(base) : source;
      const result = this.ctx.next(base, event, this.ctx.clock.now(), this.ctx.random.next());
      if (result.outcome !== 'applied') {
        this.ctx.logger.debug('event not applied', {
          operationId: base.id,
          event: event.type,
          outcome: result.outcome,
          reason: result.reason,
        });
        if (attempt > 0) await this.takeUp(base);
        return result;
      }
      try {
        if (!(await this.persist(base, result))) {
          // Another executor wrote the receipt first: this step wrote nothing, and the operation is
          // settled here too (its receipt handed over in `persist`).
          this.finish(this.record);
          return null;
        }
      } catch (error) {
        if (isTerminusError(error, 'revision_conflict') && attempt < MAX_STEP_ATTEMPTS - 1) {
          // Someone else stepped the record (another executor on the file): step again on theirs.
          // Each conflict is a write of theirs that landed, so several executors racing converge.
          const fresh = await this.ctx.ledger.load(base.id).catch(() => null);
          if (fresh !== null) {
            this.record = fresh;
            continue;
          }
        }
        const code = isTerminusError(error, 'lease_lost') ? 'superseded' : 'ledger_error';
        const reason = error instanceof Error ? error.message : String(error);
        this.ctx.logger.warn('ledger refused a step; no longer driving the operation', {
          operationId: base.id,
          event: event.type,
          error: reason,
        });
        this.halt(new ExecutorError(code, `operation ${base.id}: ${reason}`, { state: base.state, cause: error }));
        return null;
      }
      if (base.state !== this.record.state) {
        this.ctx.logger.debug('operation moved', {
          operationId: base.id,
          callNodeId: base.callNodeId,
          from: base.state,
          to: this.record.state,
          event: event.type,
        });
      }
      this.perform(result.effects);
      this.afterStep(result);
      // Every change a waiter can see (activity, cancel, progress), not only state moves (defect 6).
      this.status.refresh(this.record);
      return result;
    }
    return null;
  }

  /**
   * Another executor stepped the record (its write came first) and this driver's event does not
   * apply to the state it left: nothing armed here fits that state any more. A settled record hands
   * its receipt to this process's waiters; one still in flight is taken up as after a restart (a
   * submission in doubt is looked up by its key, never sent again), so no waiter is left with
   * nothing to wait for.
   */
  private async takeUp(fresh: ToolOperation): Promise<void> {
    if (isSettled(fresh.state)) {
      const receipt = await this.ctx.ledger.getReceipt(fresh.callNodeId).catch(() => null);
      if (receipt !== null) this.settle(receipt);
      else {
        this.fail(
          new ExecutorError('never_created', `operation ${fresh.id} settled without a receipt`, { state: fresh.state }),
        );
      }
      this.finish(fresh);
      return;
    }
    this.ctx.logger.debug('operation stepped by another executor; taking it up', {
      operationId: fresh.id,
      state: fresh.state,
    });
    this.requests.fillReadWindow();
    await this.step({ type: 'resumed', epoch: this.ctx.epoch });
  }

  /**
   * Another executor settled the operation: nothing is left to do here, no wake of this driver's
   * plan, and the status feed shows the settled record and ends, as it does when this process
   * settles the operation itself (a waiter follows its statuses to their end, then takes the receipt).
   */
  private finish(settled: ToolOperation): void {
    this.timer?.abort();
    this.status.push(settled, false);
    this.status.end();
  }

  /** Writes the step; false when a receipt already existed for the call node (nothing written). */
  private async persist(base: ToolOperation, result: StepResult & { outcome: 'applied' }): Promise<boolean> {
    const accept = result.effects.find((e) => e.type === 'accept_terminal');
    if (accept === undefined) {
      this.record = await this.ctx.ledger.apply({
        record: result.record,
        expectedRevision: base.revision,
        durable: mustBeDurable(base, result.record, result.effects),
      });
      return true;
    }
    const outcome = await this.ctx.ledger.acceptTerminal({
      receiptId: this.ctx.ids.unique('rcpt'),
      record: result.record,
      expectedRevision: base.revision,
      acceptance: accept.acceptance,
      now: this.ctx.clock.now(),
    });
    if (outcome.accepted) this.record = outcome.operation;
    else this.record = (await this.ctx.ledger.load(base.id)) ?? base;
    this.settle(outcome.receipt);
    return outcome.accepted;
  }

  private afterStep(result: StepResult & { outcome: 'applied' }): void {
    const r = this.record;
    if (r.waitingStoppedAt === null && this.failure?.code === 'waiting_stopped') {
      // Re-attached after a detach or an exhausted budget (C9): wait for the receipt again.
      this.failure = null;
      this.status.reopen(r);
    }
    if (this.cancelOwed && (r.state === 'WORKING' || r.state === 'INPUT_REQUIRED')) {
      this.cancelOwed = false;
      void this.dispatch((rec) => ({
        type: 'cancel_requested',
        epoch: this.ctx.epoch,
        expectedGeneration: rec.cancelGeneration,
      }));
    }
    if (r.state === 'NEVER_CREATED') {
      this.fail(this.credentialsRefused ?? new ExecutorError('never_created', neverCreated(r), { state: r.state }));
    }
    const working = result.effects.some((e) => e.type === 'lookup_key' || e.type === 'schedule_wake');
    if (r.state === 'UNKNOWN' && !working) {
      // Nothing is left for this driver to do: the waiters and the status feed end with result().
      this.fail(new ExecutorError('unknown', `operation ${r.id} needs manual reconciliation`, { state: r.state }));
      this.status.end();
    }
    this.follow();
  }

  private settle(receipt: Receipt): void {
    this.receipt = receipt;
    for (const waiter of this.waiters.splice(0)) waiter.resolve(receipt);
    this.follow();
    this.ctx.onReceipt(receipt);
  }

  private fail(error: ExecutorError): void {
    if (this.receipt !== null) return;
    this.failure = error;
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  private track(work: () => Promise<void>): void {
    const task = work().catch((error: unknown) => {
      if (this.abort.signal.aborted) return;
      this.ctx.logger.error('operation effect failed', { operationId: this.record.id, error: String(error) });
    });
    this.tasks.add(task);
    void task.finally(() => this.tasks.delete(task));
  }

  private perform(effects: readonly Effect[]): void {
    const epoch = this.ctx.epoch;
    for (const effect of effects) {
      switch (effect.type) {
        case 'send_submit':
          this.track(() => this.requests.submit(effect));
          break;
        case 'lookup_key':
          this.track(() => this.requests.lookup(effect));
          break;
        case 'poll_status': {
          const read = this.requests.poll(effect);
          if (read !== null) this.track(() => read);
          break;
        }
        case 'fetch_result':
          this.track(() => this.requests.fetch(effect));
          break;
        case 'send_cancel':
          this.track(() => this.requests.cancel(effect));
          break;
        case 'send_input':
          this.track(() => this.requests.input(effect));
          break;
        case 'ask_approval':
          for (const [key, request] of Object.entries(effect.requests)) {
            // A resume after a detach re-emits the round's open questions: one still before the
            // gate in this process is not asked twice (C10; gate seed 80158).
            const asked = `${effect.round} ${key}`;
            if (this.asking.has(asked)) continue;
            this.asking.add(asked);
            this.track(() => this.ask(effect.round, key, request).finally(() => this.asking.delete(asked)));
          }
          break;
        case 'schedule_wake':
          this.arm(effect.atMs);
          break;
        case 'offer_resubmit':
          void this.dispatch(
            this.ctx.resubmitNeverCreated
              ? { type: 'resubmit', epoch, submissionKey: this.ctx.ids.unique('skey') }
              : { type: 'abandon', epoch, reason: 'resubmission disabled' },
          );
          break;
        case 'stop_waiting':
          // A cancel still being confirmed keeps its timer (the record says so: wakeAt is set).
          if (this.record.wakeAt === null) this.timer?.abort();
          this.fail(
            this.credentialsRefused ??
              new ExecutorError('waiting_stopped', `stopped waiting (${effect.reason}); the task is untouched`),
          );
          this.status.push(this.record, true);
          this.status.end();
          break;
        case 'emit_status':
          this.status.push(this.record, false);
          if (isReceipted(this.record.state) || this.record.state === 'NEVER_CREATED') this.status.end();
          break;
        case 'record_unknown':
        case 'record_late_effect':
          this.ctx.logger.warn(
            effect.type === 'record_unknown' ? 'operation in doubt' : 'late effect after a won cancel',
            {
              operationId: this.record.id,
              callNodeId: this.record.callNodeId,
              evidence: effect.evidence,
            },
          );
          break;
        case 'accept_terminal':
          break;
      }
    }
  }

  /** One question to the gate; a gate that throws gives no answer: the question stays open (C10). */
  private async ask(round: number, key: string, request: unknown): Promise<void> {
    const r = this.record;
    let reply: unknown;
    try {
      reply = await this.ctx.approvalGate({
        operationId: r.id,
        callNodeId: r.callNodeId,
        taskId: r.taskId,
        tool: r.tool.name,
        round,
        key,
        request,
        requestDigest: digestOf(request ?? null),
        deadlineAt: r.policy.deadlineAt,
      });
    } catch (error) {
      this.ctx.logger.debug('the approval gate gave no answer; the question stays open', {
        operationId: r.id,
        round,
        key,
        error: String(error),
      });
      return;
    }
    if (this.stopped) return;
    await this.dispatch({ type: 'input_answered', epoch: this.ctx.epoch, round, key, reply });
  }

  /** One timer per operation: a newer wake supersedes the armed one (the machine ignores stale ones too). */
  private arm(atMs: number): void {
    this.timer?.abort();
    const delay = Math.max(0, atMs - this.ctx.clock.now());
    if (delay === 0) {
      // Due now (a terminal status observed: fetch; a resume): the wake is this operation's next
      // step, queued behind this one, with no timer between (the 0 ms timer's hop to the fetch was
      // 1.7-2.0 ms p50 at load 7.5, now 0.7-1.0 ms). A wake after a Retry-After is never due now (C6).
      this.timer = null;
      this.track(async () => {
        await this.dispatch({ type: 'wake', epoch: this.ctx.epoch, dueAt: atMs });
      });
      return;
    }
    const timer = new AbortController();
    this.timer = timer;
    const signal = AbortSignal.any([timer.signal, this.abort.signal]);
    this.track(async () => {
      try {
        await this.ctx.clock.sleep(delay, signal);
      } catch {
        return;
      }
      await this.dispatch({ type: 'wake', epoch: this.ctx.epoch, dueAt: atMs });
    });
  }
}
