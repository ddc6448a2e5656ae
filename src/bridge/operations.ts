/**
 * The bridge's operations: a host's tool call becomes an executor operation (durable ledger, any
 * task wire), followed for at most the inline wait, with the host asked for input and sent progress
 * as it can take them. Every operation id a caller names is checked against its owner first.
 */
import type { Clock, Ids, Logger } from '../core/ports.js';
import { ExecutorError, type Executor, type OperationHandle } from '../executor/executor-types.js';
import type { Ledger, Receipt } from '../executor/ledger-port.js';
import type { ToolOperation } from '../executor/operation.js';
import { isSettled } from '../executor/transitions.js';
import type { ClientWire, TaskSnapshot } from '../executor/wire-port.js';
import { Book, OPEN_STATES } from './book.js';
import { endOf, endText } from './end-states.js';
import { Rejections, synchronousAnswer } from './synchronous.js';
import { Snapshots } from './snapshots.js';
import type { Catalog, CatalogEntry } from './catalog.js';
import { askByResult, questionKey, Questions, type Question } from './questions.js';
import {
  fromReceipt,
  otherCredential,
  stillRunning,
  toolError,
  unknownOperation,
  viewOf,
  type OperationView,
  type ToolAnswer,
} from './render.js';

/** The executor refused an operation submitted under another upstream credential than the bridge's now. */
const isOtherCredential = (error: unknown): boolean =>
  error instanceof ExecutorError && error.code === 'identity_mismatch';

/** Who is calling, and what its host can do while the bridge waits. */
export interface Caller {
  /** The principal operations belong to (`stdio`, or a digest of the HTTP Authorization header). */
  readonly owner: string;
  /** The host cancelled its request: stop waiting (the operation goes on, C9). */
  readonly signal?: AbortSignal;
  /** Set when the host sent a progressToken. */
  readonly progress?: (done: number, total: number | undefined, message: string | undefined) => Promise<void>;
  /** Set when the host can answer an elicitation now, bound to this request (2025-11-25 era: pushed). */
  readonly elicit?: (params: Record<string, unknown>) => Promise<unknown>;
  /**
   * 2026-07-28 era with elicitation: questions go back as an `input_required` result (multi-round
   * trip); the host retries the same request with `inputResponses`, keyed as `questionKey` names them.
   */
  readonly inputRequired?: { readonly responses: Readonly<Record<string, unknown>> | undefined };
}

/** What the bridge's operations run on. */
export interface OperationsDeps {
  readonly executor: Executor;
  readonly ledger: Ledger;
  readonly catalog: Catalog;
  readonly questions: Questions;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly logger: Logger;
  readonly namespace: string;
  readonly inlineWaitMs: number;
  readonly maxWaitMs: number;
}

/** A host's call as an operation: its handle (`attached` when it joined one in flight), or why not. */
export type Started =
  | { readonly kind: 'started'; readonly handle: OperationHandle; readonly attached: boolean }
  | { readonly kind: 'refused'; readonly answer: ToolAnswer };

type Outcome =
  | { readonly kind: 'receipt'; readonly receipt: Receipt }
  | { readonly kind: 'ended'; readonly error: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'input' };

/**
 * The operations a host's calls became: submitted once per call (or joined), followed for at most
 * the inline wait, their ends announced, taken up again at start-up. `ModelAnswers` answers the
 * model's tools about them.
 */
export class BridgeOperations {
  readonly book: Book;
  readonly deps: OperationsDeps;
  private readonly snapshots = new Snapshots();
  private readonly rejections = new Rejections();
  private readonly watched = new Set<string>();
  private readonly endedListeners = new Set<(op: ToolOperation, receipt: Receipt | null) => void>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly takingUp = new Map<string, Promise<OperationHandle | null>>();
  /** Upstreams known to keep task logs (true) or not (false), learnt from a first read. */
  private readonly keepsLogs = new Map<string, boolean>();

  constructor(deps: OperationsDeps) {
    this.deps = deps;
    this.book = new Book(deps.ledger, deps.namespace);
  }

  /** Wraps a wire so the bridge sees every snapshot (progress, status message) and refusal as it arrives. */
  observe(wire: ClientWire): ClientWire {
    return this.snapshots.observe(this.rejections.observe(wire));
  }

  /** Every upstream snapshot the executor's reads decode (no read of its own). */
  onSnapshot(listener: (snapshot: TaskSnapshot) => void): () => void {
    return this.snapshots.subscribe(listener);
  }

  onEnded(listener: (op: ToolOperation, receipt: Receipt | null) => void): () => void {
    this.endedListeners.add(listener);
    return () => this.endedListeners.delete(listener);
  }

  /** Announces the end of an operation once (resource update, log message). */
  watch(handle: OperationHandle): void {
    if (this.watched.has(handle.operationId)) return;
    this.watched.add(handle.operationId);
    const announce = async (): Promise<void> => {
      const op = await this.deps.ledger.load(handle.operationId);
      if (op === null) return;
      const receipt = await this.deps.ledger.getReceipt(op.callNodeId);
      for (const listener of this.endedListeners) listener(op, receipt);
    };
    handle
      .result()
      .then(announce, announce)
      .catch(() => undefined);
  }

  /**
   * A host's call of an upstream tool, through the executor whatever the tool: a task tool's, or a
   * synchronous tool's plain `tools/call` (recorded in the ledger before it leaves). Either way the
   * same call made again while it runs attaches to it, and past the inline wait the host gets the
   * operation handle instead of waiting until its own timeout.
   */
  async call(entry: CatalogEntry, args: Record<string, unknown>, caller: Caller): Promise<Record<string, unknown>> {
    const started = await this.start(entry, args, caller.owner);
    if (started.kind === 'refused') return started.answer;
    const { handle, attached } = started;
    const answer = await this.follow(handle, caller, this.deps.inlineWaitMs, attached);
    if (entry.tool.durable) return answer;
    return synchronousAnswer(this.deps.ledger, this.rejections, entry, handle.operationId, answer);
  }

  /**
   * The operation of a host's call: the caller's own one in flight for the same upstream, tool and
   * canonical arguments (attached, whichever front started it), else a new one. Never two (C5).
   * `ttlMs`: the task ttl a new operation is granted (`Book.ttlOf`); an attached one keeps its own.
   */
  async start(
    entry: CatalogEntry,
    args: Record<string, unknown>,
    owner: string,
    ttlMs: number | null = null,
  ): Promise<Started> {
    const { executor, ids } = this.deps;
    const key = this.book.keyOf(entry.upstream.name, entry.tool.name, args);
    const started = await this.exclusive(`${owner}\u0000${key}`, async (): Promise<Started> => {
      const open = await this.book.open(owner, key);
      let live: OperationHandle | null = null;
      try {
        live = open === null ? null : await this.handleOf(open);
      } catch (error) {
        // The same call in flight under another upstream credential: never a second one (C5).
        if (open !== null && isOtherCredential(error)) {
          return { kind: 'refused', answer: otherCredential(open, entry.exposed) };
        }
        throw error;
      }
      if (live !== null) return { kind: 'started', handle: live, attached: true };
      const submitted = await executor.submit({
        callNodeId: this.book.newCallNode(owner, key, ids, ttlMs),
        server: entry.upstream.name,
        tool: entry.tool.name,
        args,
        // The bridge process is the waiter for as long as it runs; each host request waits only its
        // inline budget, and a restart takes the operation up again from the ledger (C9, C11).
        budgetMs: null,
      });
      return { kind: 'started', handle: submitted, attached: false };
    });
    if (started.kind === 'started') this.watch(started.handle);
    return started;
  }

  /** Whether the operation's upstream keeps task logs; asked once per upstream (unknown: false). */
  private async logsKept(op: ToolOperation): Promise<boolean> {
    if (op.server === undefined) return false;
    const known = this.keepsLogs.get(op.server);
    if (known !== undefined) return known;
    try {
      await this.deps.executor.readLogs(op.id, { after: 0, limit: 1 });
      this.keepsLogs.set(op.server, true);
      return true;
    } catch (error) {
      if (error instanceof ExecutorError && error.code === 'no_logs') this.keepsLogs.set(op.server, false);
      return false;
    }
  }

  /** What a read of the operation's log showed about its upstream: it keeps task logs, or not. */
  noteLogsKept(op: ToolOperation, kept: boolean): void {
    if (op.server !== undefined) this.keepsLogs.set(op.server, kept);
  }

  /** The "still running" answer, naming `terminus_logs` when the upstream keeps logs. */
  async running(view: OperationView, op: ToolOperation, waitedSeconds: number): Promise<ToolAnswer> {
    return stillRunning({ ...view, ...((await this.logsKept(op)) ? { logs: true } : {}) }, waitedSeconds);
  }

  /**
   * A waiter on a ledger operation (C11 `attach`): joins the driver of this process, or takes the
   * operation up again (after a restart, or when its upstream was unreachable at start-up). The
   * bridge process is the waiter for as long as it runs: no budget of its own (each host request
   * waits only its inline budget, see `settle`). One take-up per operation at a time: concurrent
   * requests about it (a wait and a retried call, say) share it, so it gets one driver.
   */
  private handleOf(op: ToolOperation): Promise<OperationHandle | null> {
    const pending = this.takingUp.get(op.callNodeId);
    if (pending !== undefined) return pending;
    const attempt = this.deps.executor.attach(op.callNodeId, { budgetMs: null });
    this.takingUp.set(op.callNodeId, attempt);
    const forget = (): void => {
      if (this.takingUp.get(op.callNodeId) === attempt) this.takingUp.delete(op.callNodeId);
    };
    attempt.then(forget, forget);
    return attempt;
  }

  /**
   * `handleOf` for a model's request, within the listing deadline: an upstream that cannot be reached,
   * or does not answer the connection in time (the take-up goes on behind), is an answer, not a hang.
   */
  async reach(op: ToolOperation): Promise<OperationHandle | ToolAnswer | null> {
    const unreachable = (why: string): ToolAnswer =>
      toolError(
        `Operation ${op.id}: its upstream ${op.server ?? '?'} cannot be reached now (${why}). ` +
          'The operation stays in the ledger and goes on once it answers: call terminus_wait again later.',
      );
    // Within the inline wait too: a host's request must be answered before the host gives up.
    const withinMs = Math.min(this.deps.catalog.deadlineMs, this.deps.inlineWaitMs);
    const stop = new AbortController();
    const overdue = this.deps.clock.sleep(withinMs, stop.signal).then(
      () => null,
      () => null,
    );
    try {
      const taken = this.handleOf(op).then((handle) => ({ handle }));
      const outcome = await Promise.race([taken, overdue]);
      if (outcome === null) {
        taken.catch(() => undefined);
        return unreachable(`no answer within ${withinMs / 1000} s`);
      }
      return outcome.handle;
    } catch (error) {
      if (isOtherCredential(error)) return otherCredential(op, (await this.view(op, null)).tool);
      return unreachable(String(error));
    } finally {
      stop.abort();
    }
  }

  /**
   * Start-up: takes up this bridge's unsettled operations (never another bridge's or `terminus
   * call`'s), in the background: an upstream that does not answer delays only its own operations,
   * never the bridge's start. Returns how many it takes up.
   */
  async resume(): Promise<number> {
    const open = (await this.deps.ledger.listByState(OPEN_STATES, 10_000)).filter((op) =>
      this.book.isOurs(op.callNodeId),
    );
    for (const op of open) {
      this.handleOf(op).then(
        (handle) => handle !== null && this.watch(handle),
        (error: unknown) =>
          this.deps.logger.warn('cannot resume operation', { operationId: op.id, error: String(error) }),
      );
    }
    return open.length;
  }

  async follow(
    handle: OperationHandle,
    caller: Caller,
    budgetMs: number,
    attached: boolean,
  ): Promise<Record<string, unknown>> {
    this.takeInputResponses(handle.operationId, caller);
    const outcome = await this.settle(handle, caller, budgetMs, caller.elicit === undefined);
    const op = await this.deps.ledger.load(handle.operationId);
    if (op === null) return unknownOperation(handle.operationId);
    const pending = this.deps.questions.pending(op.id);
    if (outcome.kind === 'input' && caller.inputRequired !== undefined && pending.length > 0) {
      return askByResult(pending);
    }
    if (outcome.kind === 'receipt') {
      await this.deps.executor.outbox.ack(outcome.receipt.id);
      return this.answer(op, outcome.receipt, attached, 0);
    }
    const waited = outcome.kind === 'ended' ? 0 : Math.round(budgetMs / 1000);
    return this.answer(op, await this.deps.ledger.getReceipt(op.callNodeId), attached, waited);
  }

  /** The operation as it stands now, from the ledger (also when it is not driven here). */
  async describe(op: ToolOperation, attached: boolean): Promise<Record<string, unknown>> {
    return this.answer(op, await this.deps.ledger.getReceipt(op.callNodeId), attached, 0);
  }

  /**
   * The one answer for an operation's state (`STATE_WORDING`): an end without a result to wait for
   * (UNKNOWN, NEVER_CREATED, expired, late effects) says so; a receipt is the tool's result; else the
   * work goes on.
   */
  private async answer(
    op: ToolOperation,
    receipt: Receipt | null,
    attached: boolean,
    waitedSeconds: number,
  ): Promise<Record<string, unknown>> {
    const view = { ...(await this.view(op, receipt)), ...(attached ? { attached } : {}) };
    const end = endOf(op.state);
    if (end !== null) {
      return {
        content: [{ type: 'text', text: endText(end, { op, tool: view.tool, receipt }) }],
        structuredContent: { operation: view, next: end.next },
        isError: true,
      };
    }
    if (receipt !== null) return fromReceipt(receipt, view);
    if (isSettled(op.state)) {
      return toolError(`${view.tool} (operation ${op.id}) ended (${op.state}) but its receipt cannot be read now.`);
    }
    return this.running(view, op, waitedSeconds);
  }

  /** Answers this operation's open questions from a retried request's `inputResponses` (bound by key and round). */
  private takeInputResponses(operationId: string, caller: Caller): void {
    const responses = caller.inputRequired?.responses;
    if (responses === undefined) return;
    for (const q of this.deps.questions.pending(operationId)) {
      const reply = responses[questionKey(q)];
      if (reply !== undefined) this.deps.questions.answer(q, reply);
    }
  }

  /**
   * Waits for the receipt, at most `budgetMs`. Asks the host for input when it can; otherwise an
   * open input question ends the wait early when `stopOnInput` (waiting longer would not help).
   */
  async settle(handle: OperationHandle, caller: Caller, budgetMs: number, stopOnInput: boolean): Promise<Outcome> {
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    caller.signal?.addEventListener('abort', onAbort);
    const cleanups: (() => void)[] = [() => caller.signal?.removeEventListener('abort', onAbort)];
    try {
      const racers: Promise<Outcome>[] = [
        handle.result().then(
          (receipt): Outcome => ({ kind: 'receipt', receipt }),
          (error: unknown): Outcome => ({ kind: 'ended', error }),
        ),
        this.deps.clock.sleep(budgetMs, stop.signal).then(
          (): Outcome => ({ kind: 'timeout' }),
          (): Outcome => ({ kind: 'timeout' }),
        ),
      ];
      const mine = (q: Question): boolean => q.operationId === handle.operationId;
      if (caller.elicit !== undefined) {
        const ask = (q: Question): void => {
          caller.elicit!(q.params).then(
            (reply) => this.deps.questions.answer(q, reply),
            (error: unknown) => this.deps.logger.warn('elicitation to the host failed', { error: String(error) }),
          );
        };
        cleanups.push(this.deps.questions.onQuestion((q) => mine(q) && ask(q)));
        for (const q of this.deps.questions.pending(handle.operationId)) ask(q);
      } else if (stopOnInput) {
        racers.push(
          new Promise<Outcome>((resolve) => {
            if (this.deps.questions.pending(handle.operationId).length > 0) resolve({ kind: 'input' });
            cleanups.push(this.deps.questions.onQuestion((q) => mine(q) && resolve({ kind: 'input' })));
          }),
        );
      }
      if (caller.progress !== undefined) cleanups.push(this.forwardProgress(handle.operationId, caller.progress));
      return await Promise.race(racers);
    } finally {
      stop.abort();
      for (const cleanup of cleanups) cleanup();
    }
  }

  /** Forwards the upstream's progress of one operation, only increasing (MCP requires it). */
  private forwardProgress(
    operationId: string,
    send: (done: number, total: number | undefined, message: string | undefined) => Promise<void>,
  ): () => void {
    let last = -1;
    let taskId: string | null = null;
    const listener = (snapshot: TaskSnapshot): void => {
      void (async () => {
        taskId ??= (await this.deps.ledger.load(operationId))?.taskId ?? null;
        if (snapshot.taskId !== taskId || snapshot.progress === undefined || snapshot.progress.done <= last) return;
        last = snapshot.progress.done;
        await send(snapshot.progress.done, snapshot.progress.total, snapshot.statusMessage);
      })().catch(() => undefined);
    };
    return this.snapshots.subscribe(listener);
  }

  /** What the upstream last said about the operation's task (status message, progress), if anything yet. */
  latest(op: ToolOperation): TaskSnapshot | undefined {
    return op.taskId === null ? undefined : this.snapshots.latest(op.taskId);
  }

  /** How the model sees an operation: its exposed tool name, progress, open questions, outcome. */
  async view(op: ToolOperation, receipt: Receipt | null): Promise<OperationView> {
    const tool = op.server === undefined ? op.tool.name : this.deps.catalog.exposedName(op.server, op.tool.name);
    const snapshot = op.taskId === null ? undefined : this.snapshots.latest(op.taskId);
    return viewOf(op, tool, snapshot, this.deps.questions.pending(op.id), receipt);
  }

  /** One critical section per key: concurrent identical calls share one submit (never twice). */
  private async exclusive<T>(key: string, run: () => Promise<T>): Promise<T> {
    const before = this.locks.get(key) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(run);
    this.locks.set(key, mine);
    try {
      return await mine;
    } finally {
      if (this.locks.get(key) === mine) this.locks.delete(key);
    }
  }
}
