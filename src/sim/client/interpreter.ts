/**
 * A minimal interpreter of the operation machine, used only by the broken-`next()` variants:
 * `createExecutor` has no test-only hook for its step function, so these variants run here. Every event is stepped through the REAL `next()`, persisted
 * through the REAL ledger (`apply`, or `acceptTerminal` for receipts) before any effect runs, and the
 * effects go through the REAL Tasks-extension client adapter; wire answers become events through the
 * executor's own `interpreter-answers.ts`. Events of one operation are stepped one at a time.
 *
 * A crash is `kill()`: its timers die with its clock scope, answers still in flight are dropped,
 * nothing more is written. A new interpreter on the same ledger takes over with `resume()`.
 */
import { requestDigest } from '../../core/digest.js';
import type { Ids } from '../../core/ports.js';
import type { OperationEvent } from '../../executor/events.js';
import type { Effect } from '../../executor/effects.js';
import {
  cancelAnswered,
  fetchFailed,
  lookupAnswered,
  lookupFailed,
  requestFailed,
  resultFetched,
  statusObserved,
  submitAnswered,
  submitFailed,
} from '../../executor/interpreter-answers.js';
import type { Ledger } from '../../executor/ledger-port.js';
import { initialEffects, next as realNext } from '../../executor/machine.js';
import { newOperation, type ToolOperation } from '../../executor/operation.js';
import { IN_FLIGHT_STATES } from '../../executor/transitions.js';
import type { ClientWire } from '../../executor/wire-port.js';
import type { ClockScope } from '../clock.js';
import type { SimRandom } from '../random.js';
import type { Trace } from '../trace.js';
import type { SimClient } from './sim-client.js';

export type NextFn = typeof realNext;

/** States whose task the interpreter listens for (the executor's own `LISTENED`). */
const LISTENED: readonly ToolOperation['state'][] = ['WORKING', 'INPUT_REQUIRED', 'CANCEL_REQUESTED'];

export interface InterpreterOptions {
  readonly name: string;
  readonly ledger: Ledger;
  readonly wire: ClientWire;
  readonly scope: ClockScope;
  readonly random: SimRandom;
  readonly ids: Ids;
  readonly trace: Trace;
  /** The approval gate (C10): answers one request of a round. */
  readonly approve: (op: ToolOperation, key: string) => Promise<unknown>;
  /** The caller's choice on a proven never-created submission (`offer_resubmit`). */
  readonly resubmit: (callNodeId: string) => boolean;
  /** Test-only: a broken variant of `next()`. */
  readonly next?: NextFn;
}

export class SimInterpreter implements SimClient {
  readonly #o: InterpreterOptions;
  readonly #next: NextFn;
  readonly #queues = new Map<string, Promise<void>>();
  #alive = true;
  #epoch = 0;
  /** The wire's push stream for each operation's task while it is waited on, as the executor's. */
  readonly #watching = new Map<string, () => void>();

  constructor(options: InterpreterOptions) {
    this.#o = options;
    this.#next = options.next ?? realNext;
  }

  get alive(): boolean {
    return this.#alive;
  }

  async start(): Promise<void> {
    this.#epoch = await this.#o.ledger.currentEpoch();
    // A pushed status is a `notification` event for the operation of its task (the machine decides).
    this.#o.wire.onStatusHint?.((taskId, status) => {
      void this.#o.ledger.findByTaskId(taskId).then((records) => {
        for (const r of records)
          if (this.#alive) this.event(r.id, { type: 'notification', epoch: this.#epoch, status });
      });
    });
  }

  #follow(record: ToolOperation): void {
    const listen = record.taskId !== null && LISTENED.includes(record.state);
    const unwatch = this.#watching.get(record.id);
    if (listen && unwatch === undefined && record.taskId !== null) {
      const stop = this.#o.wire.watchTask?.(record.taskId);
      if (stop !== undefined) this.#watching.set(record.id, stop);
    } else if (!listen && unwatch !== undefined) {
      unwatch();
      this.#watching.delete(record.id);
    }
  }

  kill(): void {
    this.#alive = false;
    this.#o.scope.kill();
    this.#o.trace.add(this.#o.name, 'crash');
  }

  async submit(
    callNodeId: string,
    tool: string,
    args: Record<string, unknown>,
    budgetMs: number | null = null,
  ): Promise<void> {
    const { ids, scope, ledger, wire } = this.#o;
    const record = newOperation({
      id: ids.unique('op'),
      callNodeId,
      requestDigest: requestDigest(tool, args),
      tool: { name: tool, descriptorVersion: '1' },
      body: args,
      wire: { name: wire.wire, adapterVersion: wire.version },
      submissionKey: ids.unique('key'),
      executionEpoch: this.#epoch,
      now: scope.now(),
      // The first waiter's budget (C11), as the real executor's `submit` takes it.
      budgetMs,
    });
    const { created, operation } = await ledger.create(record);
    this.#o.trace.add(this.#o.name, `submit ${callNodeId} -> ${operation.id} created=${String(created)}`);
    if (created) this.#enqueue(operation.id, () => this.#perform(operation, initialEffects(operation)));
  }

  /** Every in-flight operation of the ledger is taken up again. */
  async resume(): Promise<void> {
    const records = await this.#o.ledger.listByState(IN_FLIGHT_STATES, 1_000);
    // As the real executor's `resume()` in the simulation: a fresh, unbounded budget (C11).
    for (const record of records) this.event(record.id, { type: 'resumed', epoch: this.#epoch, deadlineAt: null });
  }

  /** C8 through the machine: compare-and-set on the generation the caller last saw. */
  async cancel(callNodeId: string): Promise<string> {
    const record = await this.#o.ledger.loadByCallNode(callNodeId);
    if (record === null) return 'no_operation';
    return this.#stepNow(record.id, {
      type: 'cancel_requested',
      epoch: this.#epoch,
      expectedGeneration: record.cancelGeneration,
    });
  }

  async detach(callNodeId: string): Promise<void> {
    const record = await this.#o.ledger.loadByCallNode(callNodeId);
    if (record !== null) this.event(record.id, { type: 'budget_exhausted', epoch: this.#epoch, reason: 'disconnect' });
  }

  /** A later waiter with a fresh, unbounded budget (C11), as the real executor's `attach`. */
  async reattach(callNodeId: string): Promise<void> {
    const record = await this.#o.ledger.loadByCallNode(callNodeId);
    if (record !== null) this.event(record.id, { type: 'waiter_joined', epoch: this.#epoch, deadlineAt: null });
  }

  event(operationId: string, event: OperationEvent): void {
    this.#enqueue(operationId, async () => {
      await this.#step(operationId, event);
    });
  }

  /** Steps `event` in the operation's queue and resolves with the outcome (applied / reason). */
  #stepNow(operationId: string, event: OperationEvent): Promise<string> {
    return new Promise((resolve) => {
      this.#enqueue(operationId, async () => resolve(await this.#step(operationId, event)));
    });
  }

  #enqueue(operationId: string, job: () => Promise<void>): void {
    const previous = this.#queues.get(operationId) ?? Promise.resolve();
    const run = previous.then(async () => {
      if (!this.#alive) return;
      try {
        await job();
      } catch (error) {
        this.#o.trace.add(
          this.#o.name,
          `error ${operationId}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    });
    this.#queues.set(operationId, run);
  }

  async #step(operationId: string, event: OperationEvent): Promise<string> {
    const { ledger, scope, trace, ids } = this.#o;
    const record = await ledger.load(operationId);
    if (record === null || !this.#alive) return 'gone';
    const step = this.#next(record, event, scope.now(), this.#o.random.next());
    if (step.outcome !== 'applied') {
      trace.add(this.#o.name, `${record.callNodeId} ${event.type} ${step.outcome}:${step.reason}`);
      return step.reason;
    }
    const accept = step.effects.find((e) => e.type === 'accept_terminal');
    let stored: ToolOperation;
    if (accept !== undefined) {
      const outcome = await ledger.acceptTerminal({
        receiptId: ids.unique('rcpt'),
        record: step.record,
        expectedRevision: record.revision,
        acceptance: accept.acceptance,
        now: scope.now(),
      });
      if (!outcome.accepted) {
        trace.add(this.#o.name, `${record.callNodeId} receipt exists ${outcome.receipt.status}`);
        return 'receipt_exists';
      }
      stored = outcome.operation;
    } else {
      stored = await ledger.apply({ record: step.record, expectedRevision: record.revision });
    }
    trace.add(this.#o.name, `${record.callNodeId} ${event.type} ${record.state}->${stored.state}`);
    if (this.#alive) this.#follow(stored);
    if (this.#alive) await this.#perform(stored, step.effects);
    return 'applied';
  }

  async #perform(record: ToolOperation, effects: readonly Effect[]): Promise<void> {
    for (const effect of effects) {
      if (!this.#alive) return;
      await this.#effect(record, effect);
    }
  }

  async #effect(record: ToolOperation, effect: Effect): Promise<void> {
    const { wire, scope, trace } = this.#o;
    const epoch = record.executionEpoch;
    const id = record.id;
    const ask = <T>(call: () => Promise<T>, ok: (v: T) => OperationEvent, failed: (e: unknown) => OperationEvent) => {
      call().then(
        (value) => this.#alive && this.event(id, ok(value)),
        (error: unknown) => this.#alive && this.event(id, failed(error)),
      );
    };
    switch (effect.type) {
      case 'send_submit': {
        const result = await this.#step(id, { type: 'submit_sent', epoch });
        if (result !== 'applied') return;
        const request = { tool: record.tool.name, args: record.body, submissionKey: effect.submissionKey };
        ask(
          () => wire.submit(request),
          (a) => submitAnswered(a, epoch),
          (e) => submitFailed(e, epoch),
        );
        return;
      }
      case 'lookup_key':
        ask(
          () => wire.lookupKey(effect.submissionKey),
          (a) => lookupAnswered(a, epoch),
          (e) => lookupFailed(e, epoch),
        );
        return;
      case 'schedule_wake':
        scope.at(effect.atMs, () => this.event(id, { type: 'wake', epoch, dueAt: effect.atMs }));
        return;
      case 'poll_status':
        ask(
          () => wire.getStatus(effect.taskId),
          (s) => statusObserved(s, effect.seq, epoch),
          (e) => requestFailed('poll', e, epoch),
        );
        return;
      case 'fetch_result':
        ask(
          () => wire.fetchResult(effect.taskId),
          (a) => resultFetched(a, epoch, true),
          (e) => fetchFailed(e, record, epoch),
        );
        return;
      case 'send_cancel':
        ask(
          () => wire.cancel(effect.taskId),
          (a) => cancelAnswered(a, effect.generation, epoch),
          (e) => requestFailed('cancel', e, epoch),
        );
        return;
      case 'send_input':
        ask(
          () => wire.sendInput(effect.taskId, effect.responses),
          () => ({ type: 'input_sent', epoch, round: effect.round, keys: Object.keys(effect.responses) }),
          (e) => requestFailed('input', e, epoch),
        );
        return;
      case 'ask_approval':
        for (const key of Object.keys(effect.requests)) {
          trace.add(this.#o.name, `${record.callNodeId} approval asked round ${effect.round} key ${key}`);
          ask(
            () => this.#o.approve(record, key),
            (reply) => ({ type: 'input_answered', epoch, round: effect.round, key, reply }),
            () => ({ type: 'abandon', epoch, reason: 'approval failed' }),
          );
        }
        return;
      case 'offer_resubmit':
        this.event(
          id,
          this.#o.resubmit(record.callNodeId)
            ? { type: 'resubmit', epoch, submissionKey: this.#o.ids.unique('key') }
            : { type: 'abandon', epoch, reason: 'caller declined to resubmit' },
        );
        return;
      default:
        trace.add(this.#o.name, `${record.callNodeId} ${effect.type}`);
        return;
    }
  }
}
