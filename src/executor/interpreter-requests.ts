/**
 * The wire requests of one operation, as its driver (`interpreter.ts`) performs the machine's
 * effects. Every request takes a token of the executor-wide bucket first; a read (status, result,
 * key lookup) also waits out any Retry-After, and a status read takes a slot under the
 * per-operation cap, booked at the instant it leaves (C6). Its answer or failure becomes the
 * operation's next event (`interpreter-answers.ts`), stepped in the driver's queue.
 */
import type { Clock, Logger } from '../core/ports.js';
import type { Effect } from './effects.js';
import type { OperationEvent } from './events.js';
import type { ValidationContext } from './executor-types.js';
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
} from './interpreter-answers.js';
import type { StepResult } from './machine.js';
import type { ToolOperation } from './operation.js';
import { statusReadCap, statusReadOpensAt } from './schedule.js';
import { readStatus } from './status-by-events.js';
import type { TokenBucket } from './token-bucket.js';
import { WireFailure, type ClientWire } from './wire-port.js';

/** What the requests need of the executor (a part of the driver's context). */
export interface RequestContext {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly bucket: TokenBucket;
  /** The executor epoch every event is stamped with. */
  readonly epoch: number;
  readonly validateResult?: (result: Record<string, unknown>, context: ValidationContext) => void | Promise<void>;
  /** Status reads by the task's events where the server serves them (`ExecutorOptions.followEvents`). */
  readonly followEvents?: boolean;
}

/** What the requests need of the operation's driver. */
export interface RequestHost {
  readonly record: ToolOperation;
  readonly wire: ClientWire;
  readonly isStopped: boolean;
  dispatch(event: OperationEvent): Promise<StepResult | null>;
  /**
   * The server refused the credentials (`unauthorized`). `submission`: the refused request was the
   * submission, whose refusal is still recorded (NEVER_CREATED); any other is not, and the host
   * stops driving the operation, its record unchanged.
   */
  refused(failure: WireFailure, submission: boolean): void;
}

type Of<T extends Effect['type']> = Extract<Effect, { type: T }>;

export class WireRequests {
  private readonly host: RequestHost;
  private readonly ctx: RequestContext;
  /** Aborted when the driver stops: nothing it sends is answered into the queue any more. */
  private readonly signal: AbortSignal;
  /** When this operation's last status reads leave (at most the cap's count, ascending): C6. */
  private readonly statusReadsSent: number[] = [];
  /** The status read of this process queued for a token or on the wire (until its answer or failure). */
  private reading: object | null = null;
  /**
   * The end of the newest Retry-After this process was answered for the operation, noted as the
   * answer arrives: its step is applied after the ledger write, and a read leaving in between would
   * not see it on the record (C6: gate seeds 203394, 212491, a cancel's read sent in the millisecond
   * the read beside it was answered 429).
   */
  private heardRetryAfterUntil = 0;

  constructor(host: RequestHost, ctx: RequestContext, signal: AbortSignal) {
    this.host = host;
    this.ctx = ctx;
    this.signal = signal;
  }

  /** Counts this second's status-read window as full: whoever drove the record may have used it (C6). */
  fillReadWindow(): void {
    const now = this.ctx.clock.now();
    this.statusReadsSent.splice(
      0,
      this.statusReadsSent.length,
      ...Array<number>(statusReadCap(this.host.record.policy)).fill(now),
    );
  }

  /** The driver moved to a new connection: a read on the old one no longer holds back the next. */
  rebound(): void {
    this.reading = null;
  }

  /** The key is persisted with the record already; `submit_sent` is recorded before the request leaves. */
  async submit(effect: Of<'send_submit'>): Promise<void> {
    const epoch = this.ctx.epoch;
    const sent = await this.host.dispatch({ type: 'submit_sent', epoch });
    if (sent?.outcome !== 'applied') return;
    const r = this.host.record;
    const request = {
      tool: r.tool.name,
      args: r.body,
      submissionKey: effect.submissionKey,
      ...(effect.inputResponses === undefined ? {} : { inputResponses: effect.inputResponses }),
      ...(effect.requestState === undefined ? {} : { requestState: effect.requestState }),
      // C12: recorded before the plain call leaves; if it cannot be, the plain call is not sent.
      beforeUnkeyed: async () => {
        const step = await this.host.dispatch({ type: 'submit_unkeyed', epoch });
        if (step?.outcome !== 'applied')
          throw new WireFailure('rejected', 'the plain call could not be recorded first');
      },
    };
    await this.send(
      (signal) => this.host.wire.submit(request, signal),
      async (answer) =>
        submitAnswered(answer, epoch, answer.kind !== 'immediate' || (await this.validate(answer.result, ''))),
      (error) => submitFailed(error, epoch),
      { submission: true },
    );
  }

  lookup(effect: Of<'lookup_key'>): Promise<void> {
    const epoch = this.ctx.epoch;
    return this.send(
      (signal) => this.host.wire.lookupKey(effect.submissionKey, signal),
      (answer) => lookupAnswered(answer, epoch),
      (error) => lookupFailed(error, epoch),
      { read: true },
    );
  }

  /**
   * A status read (by the task's events where the server serves them: `status-by-events.ts`), or
   * null when none goes. WORKING reads one status at a time: the one out answers
   * for this one too (its answer or failure arms the next). A waiter re-attached after a detach in
   * the same millisecond as a resume's read (the wake due now runs as the next step) re-issued it
   * while the first was out: two input_required answers opened the round twice (approval asked
   * twice), and the second read, queued 150 ms for a token, went out once the first answer had
   * paused polling (C10; gate seeds 18026, 71076). A cancel's read beside an older one still goes
   * (it is what confirms the cancel). Only a stopped driver leaves `reading` set (it sends nothing more).
   */
  poll(effect: Of<'poll_status'>): Promise<void> | null {
    if (this.reading !== null && this.host.record.state === 'WORKING') return null;
    const epoch = this.ctx.epoch;
    const read = (this.reading = {});
    const done = () => {
      if (this.reading === read) this.reading = null;
    };
    return this.send(
      (signal) =>
        readStatus(
          this.host.wire,
          this.host.record,
          effect.taskId,
          this.ctx.bucket,
          signal,
          this.ctx.followEvents,
        ).finally(done),
      (read) => statusObserved(read, effect.seq, epoch),
      (error) => requestFailed('poll', error, epoch),
      { read: true, statusRead: true },
    );
  }

  async fetch(effect: Of<'fetch_result'>): Promise<void> {
    const epoch = this.ctx.epoch;
    await this.send(
      (signal) => this.host.wire.fetchResult(effect.taskId, signal, this.host.record.observedTerminal?.status),
      async (answer) =>
        resultFetched(
          answer,
          epoch,
          answer.status !== 'completed' || (await this.validate(answer.result, effect.taskId)),
        ),
      (error) => fetchFailed(error, this.host.record, epoch),
      { read: true, statusRead: true },
    );
  }

  cancel(effect: Of<'send_cancel'>): Promise<void> {
    const epoch = this.ctx.epoch;
    return this.send(
      (signal) => this.host.wire.cancel(effect.taskId, signal),
      (answer) => cancelAnswered(answer, effect.generation, epoch),
      (error) => requestFailed('cancel', error, epoch),
    );
  }

  input(effect: Of<'send_input'>): Promise<void> {
    const epoch = this.ctx.epoch;
    const keys = Object.keys(effect.responses);
    return this.send(
      (signal) => this.host.wire.sendInput(effect.taskId, effect.responses, signal),
      () => ({ type: 'input_sent', epoch, round: effect.round, keys }),
      (error) => requestFailed('input', error, epoch),
    );
  }

  /** `validateResult` on a completed result (fetched, or a synchronous answer: C12); false if it refused. */
  private async validate(result: Record<string, unknown>, taskId: string): Promise<boolean> {
    if (this.ctx.validateResult === undefined) return true;
    const r = this.host.record;
    try {
      await this.ctx.validateResult(result, { operationId: r.id, callNodeId: r.callNodeId, tool: r.tool.name, taskId });
      return true;
    } catch (error) {
      this.ctx.logger.warn('result refused by validateResult; not accepted', {
        operationId: r.id,
        error: String(error),
      });
      return false;
    }
  }

  /**
   * One request through the shared QPS bucket; its answer or failure becomes the next event. A read
   * (status, result, key lookup) also waits for a Retry-After that arrived while it queued for a
   * token (C6: gate seeds 10534, 12710, 44639). The caller's own cancel and input replies are not
   * held: the machine sends them at once on purpose. Refused credentials are the host's to handle
   * (`refused`): no event of a request that was refused, since nothing happened to the task.
   */
  private async send<T>(
    send: (signal: AbortSignal) => Promise<T>,
    onAnswer: (answer: T) => OperationEvent | Promise<OperationEvent>,
    onFailure: (error: unknown) => OperationEvent,
    kind: { readonly read?: boolean; readonly statusRead?: boolean; readonly submission?: boolean } = {},
  ): Promise<void> {
    const read = kind.read === true;
    const statusRead = kind.statusRead === true;
    const signal = this.signal;
    await this.ctx.bucket.take(signal);
    if (this.host.isStopped) return;
    // Waits for any Retry-After (read from the record, and heard since: a 429 answered while this
    // one waited) and, for a status read, for a slot under the cap, booked at the instant it leaves.
    let booked: number | null = null;
    for (;;) {
      const now = this.ctx.clock.now();
      let at = read ? Math.max(now, this.host.record.notBefore ?? 0, this.heardRetryAfterUntil) : now;
      if (statusRead) {
        if (booked !== null) this.unbookStatusRead(booked);
        booked = at = this.bookStatusRead(at);
      }
      if (at <= now) break;
      try {
        await this.ctx.clock.sleep(at - now, signal);
      } catch {
        return;
      }
      if (this.host.isStopped) return;
    }
    let event: OperationEvent;
    try {
      event = await onAnswer(await send(signal));
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof WireFailure && error.retryAfterMs !== undefined && error.retryAfterMs > 0) {
        const until = this.ctx.clock.now() + Math.ceil(error.retryAfterMs);
        this.heardRetryAfterUntil = Math.max(this.heardRetryAfterUntil, until);
      }
      if (error instanceof WireFailure && error.kind === 'unauthorized') {
        this.host.refused(error, kind.submission === true);
        if (kind.submission !== true) return;
      }
      event = onFailure(error);
    }
    if (signal.aborted) return;
    await this.host.dispatch(event);
  }

  /** C6: the per-operation cap binds here, where every status read leaves, whichever path issued it. */
  private bookStatusRead(at: number): number {
    const cap = statusReadCap(this.host.record.policy);
    const opens = statusReadOpensAt(this.statusReadsSent, at, cap);
    this.statusReadsSent.push(opens);
    this.statusReadsSent.sort((a, b) => a - b);
    if (this.statusReadsSent.length > cap) this.statusReadsSent.splice(0, this.statusReadsSent.length - cap);
    return opens;
  }

  private unbookStatusRead(at: number): void {
    const i = this.statusReadsSent.indexOf(at);
    if (i >= 0) this.statusReadsSent.splice(i, 1);
  }
}
