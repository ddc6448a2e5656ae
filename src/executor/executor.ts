/**
 * `createExecutor`: the client half of mcp-terminus. It persists every long-running tool call in a
 * `Ledger`, drives it through the operation machine over the call's wire, and hands each call node
 * exactly one terminal receipt through `result()` and the outbox (docs/guarantees.md, C1-C13).
 */
import { digestOf, requestDigest } from '../core/digest.js';
import { silentLogger } from '../core/ports.js';
import type { WireName } from '../core/task.js';
import type {
  Executor,
  ExecutorOptions,
  LogsOptions,
  OperationHandle,
  SubmitInput,
  WaitOptions,
} from './executor-types.js';
import { ExecutorError } from './executor-types.js';
import { OperationDriver, type DriverContext } from './interpreter.js';
import { initialEffects, next, type NextFn } from './machine.js';
import { newOperation, type SessionBinding, type ToolOperation } from './operation.js';
import { createOutbox } from './outbox.js';
import { createTokenBucket } from './token-bucket.js';
import { IN_FLIGHT_STATES, isSettled } from './transitions.js';
import type { ClientWire } from './wire-port.js';
import { settledHandle, liveHandle } from './executor-handle.js';
import { followEvents } from './event-follow.js';
import { followLogs, readLogPage, type LogsDeps } from './logs.js';
import { checkIdentity, identityFingerprint } from './identity.js';

export const EXECUTOR_DEFAULTS = {
  qps: 20,
  qpsBurst: 1,
  defaultBudgetMs: 60 * 60 * 1000,
  rolloutPercent: 100,
} as const;

/** Most in-flight operations `resume()` takes up in one call. */
const RESUME_LIMIT = 100_000;

/**
 * Opens an executor on a ledger. Reads the ledger's epoch; every event it steps is stamped with it.
 *
 * @example
 * ```ts
 * const ledger = openSqliteLedger({ path: DEFAULT_LEDGER_PATH });
 * const executor = await createExecutor({
 *   ledger,
 *   // `session`: a resumed operation's HTTP session, continued where its wire has one.
 *   connect: (server, wire, session) =>
 *     connectServer(servers[server], { clock: systemClock, wire: wire ?? 'auto', session }),
 *   clock: systemClock, random: systemRandom, ids: systemIds,
 * });
 * await executor.resume(); // take up whatever a previous process left in flight
 * const op = await executor.submit({ callNodeId: 'node-7', server: 'reports', tool: 'build_report', args: {} });
 * const receipt = await op.result();
 * for await (const item of executor.outbox) { advance(item.receipt); await executor.outbox.ack(item.receipt.id); }
 * ```
 */
export function createExecutor(options: ExecutorOptions): Promise<Executor> {
  return createExecutorWith(options, next);
}

/**
 * `createExecutor` whose drivers step every event with `step` instead of the machine's own `next`.
 * Not part of the package API: the simulation runs its deliberately broken variants of `next`
 * (`sim/variants.ts`) through this same executor, so the gate's checkers are proven on the real
 * interpreter, token bucket and outbox.
 */
export async function createExecutorWith(options: ExecutorOptions, step: NextFn): Promise<Executor> {
  const { ledger, clock, ids } = options;
  const logger = options.logger ?? silentLogger;
  const epoch = await ledger.currentEpoch();
  const rolloutPercent = options.rolloutPercent ?? EXECUTOR_DEFAULTS.rolloutPercent;
  const bucket = createTokenBucket({
    qps: options.qps ?? EXECUTOR_DEFAULTS.qps,
    burst: options.qpsBurst ?? EXECUTOR_DEFAULTS.qpsBurst,
    clock,
  });
  const outbox = createOutbox(ledger, clock);
  const drivers = new Map<string, OperationDriver>();
  const wires = new Map<string, Promise<ClientWire>>();
  const wireOf = new Map<OperationDriver, ClientWire>();
  const submitting = new Map<string, Promise<OperationHandle>>();
  const disabledWires = new Set(options.disabledWires ?? []);
  let state: 'open' | 'rolled_back' | 'closed' = 'open';
  /** Aborted by `close()`: ends a reconnect's back-off at once (a real-clock sleep would hold the process). */
  const closing = new AbortController();

  const ctx: DriverContext = {
    ledger,
    clock,
    random: options.random,
    ids,
    logger,
    bucket,
    epoch,
    next: step,
    approvalGate: options.approvalGate ?? (async () => ({ action: 'cancel' })),
    ...(options.validateResult === undefined ? {} : { validateResult: options.validateResult }),
    resubmitNeverCreated: options.resubmitNeverCreated ?? true,
    followEvents: options.followEvents ?? true,
    onReceipt: (receipt) => {
      outbox.notify();
      // Settled: later look-ups go to the ledger, so a long-lived executor does not keep every driver.
      const driver = drivers.get(receipt.callNodeId);
      if (driver !== undefined) {
        drivers.delete(receipt.callNodeId);
        wireOf.delete(driver);
      }
    },
  };

  function refuseIfNotOpen(): void {
    if (state === 'closed') throw new ExecutorError('closed', 'executor closed');
    if (state === 'rolled_back') throw new ExecutorError('rolled_back', 'executor rolled back: no new operations');
  }

  /**
   * One connection per (server, wire, session); a negotiated wire is also cached under its own name.
   * New calls share the connection without a session; each kept session of resumed operations has
   * its own (the session id is part of the key only, never logged).
   */
  function getWire(server: string, wire?: WireName, session?: SessionBinding | null): Promise<ClientWire> {
    const bound = session ?? undefined;
    const key = `${server}\u0000${wire ?? 'auto'}\u0000${bound?.id ?? ''}`;
    let pending = wires.get(key);
    if (pending === undefined) {
      pending = options.connect(server, wire, ...(bound === undefined ? [] : [bound])).then((connected) => {
        // Also under its own wire name, and under its session: the operations this connection creates
        // keep that session, and are driven over this very connection while it lives.
        const own = `${server}\u0000${connected.wire}\u0000${bound?.id ?? ''}`;
        if (!wires.has(own)) wires.set(own, Promise.resolve(connected));
        const session = connected.session?.()?.id;
        const inSession = `${server}\u0000${connected.wire}\u0000${session ?? ''}`;
        if (session !== undefined && !wires.has(inSession)) wires.set(inSession, Promise.resolve(connected));
        connected.onStatusHint?.((taskId, status) => {
          for (const [driver, w] of wireOf) if (w === connected && driver.record.taskId === taskId) driver.hint(status);
        });
        connected.onTerminalHeard?.((taskId, outcome) => {
          for (const [driver, w] of wireOf)
            if (w === connected && driver.record.taskId === taskId) driver.heard(outcome);
        });
        connected.onClose?.((reason) => void reconnect(connected, reason));
        return connected;
      });
      wires.set(key, pending);
      // A failed connect is not cached: the next call tries again.
      pending.catch(() => wires.delete(key));
    }
    return pending;
  }

  /**
   * Issue 11, defect 5: a wire whose connection ended by itself (a stdio server that died) is dropped
   * from the cache; its operations are driven over a new connection, and each one still waited for
   * is taken up again at once (`resumed`: whatever was on the wire is re-issued, so a death is seen
   * now, not at the next poll). A task the new server does not know answers 404 and goes the usual
   * way (UNKNOWN, key lookup); nothing waits for ever on a dead pipe. A failed reconnect is tried
   * again with back-off (1 s doubling to 30 s) while the executor is open; meanwhile requests fail
   * `lost` and the status says `unreachable`.
   */
  async function reconnect(dead: ClientWire, reason: string): Promise<void> {
    for (const [key, pending] of [...wires]) {
      if ((await pending.catch(() => null)) === dead) wires.delete(key);
    }
    const affected = [...wireOf].filter(([, w]) => w === dead).map(([driver]) => driver);
    const server = affected[0]?.record.server;
    if (server === undefined) return;
    logger.warn('server connection ended; reconnecting its operations', {
      wire: dead.wire,
      reason,
      operations: affected.length,
    });
    for (let delay = 1_000; state === 'open' && affected.length > 0; delay = Math.min(delay * 2, 30_000)) {
      try {
        const fresh = await getWire(server, affected[0]!.record.wire.name, affected[0]!.record.session);
        for (const driver of affected) {
          if (driver.isStopped || wireOf.get(driver) !== dead) continue;
          driver.rebind(fresh);
          wireOf.set(driver, fresh);
          // A detached one keeps its own timers (a cancel still confirmed goes on over the new wire).
          if (driver.record.waitingStoppedAt === null) await driver.dispatch({ type: 'resumed', epoch });
        }
        return;
      } catch (error) {
        logger.warn('reconnect failed; trying again', { reason: String(error), retryInMs: delay });
        await clock.sleep(delay, closing.signal).catch(() => undefined);
      }
    }
  }

  function register(record: ToolOperation, wire: ClientWire, takenUp = false): OperationDriver {
    const driver = new OperationDriver(record, wire, ctx, takenUp);
    drivers.set(record.callNodeId, driver);
    wireOf.set(driver, wire);
    return driver;
  }

  /** The deadline of a waiter with this budget (C11): `undefined` takes the default, `null` is none. */
  function deadlineOf(budgetMs: number | null | undefined): number | null {
    const budget = budgetMs !== undefined ? budgetMs : (options.defaultBudgetMs ?? EXECUTOR_DEFAULTS.defaultBudgetMs);
    return budget === null ? null : clock.now() + budget;
  }

  /**
   * A new waiter on an operation found in the ledger, with its own deadline (C11): joins the driver
   * of this process, or takes the record up (after a restart; a rollback adopts an older epoch).
   */
  async function adopt(record: ToolOperation, deadlineAt: number | null): Promise<OperationHandle> {
    if (!isSettled(record.state)) refuseOtherIdentity(record);
    const waiter = { attached: true, deadlineAt };
    const live = drivers.get(record.callNodeId);
    if (live !== undefined && !live.isStopped) {
      await live.dispatch({ type: 'waiter_joined', epoch, deadlineAt });
      return liveHandle(live, epoch, clock, waiter, logsOf);
    }
    if (isSettled(record.state)) return settledHandle(record, ledger, clock, logsOf);
    if (record.server === undefined) {
      throw new ExecutorError('no_server', `operation ${record.id} does not name its server`, { state: record.state });
    }
    const driver = register(record, await getWire(record.server, record.wire.name, record.session), true);
    await driver.dispatch(
      record.executionEpoch < epoch
        ? { type: 'rollback', newEpoch: epoch, deadlineAt }
        : { type: 'resumed', epoch, deadlineAt },
    );
    return liveHandle(driver, epoch, clock, waiter, logsOf);
  }

  /**
   * An operation submitted under another credential than this executor's is refused before anything
   * is sent: its server would answer "not found" (S8), which proves nothing about the task.
   */
  function refuseOtherIdentity(record: ToolOperation): void {
    if (options.credentialOf === undefined || record.server === undefined) return;
    const check = checkIdentity(record, options.credentialOf(record.server));
    if (check.ok) return;
    throw new ExecutorError(
      'identity_mismatch',
      check.why === 'missing'
        ? `operation ${record.id} was submitted with a credential, and none is given now`
        : `operation ${record.id} was submitted under another credential than the one given now`,
      { state: record.state },
    );
  }

  /**
   * Logs are read over the wire that drives the operation here, else over a connection to its server
   * on its own wire (cached like any other): never a step of its machine (issue 18).
   */
  const logsDeps: LogsDeps = {
    ledger,
    clock,
    bucket,
    wireOf: async (record) => {
      const live = drivers.get(record.callNodeId);
      const driven = live === undefined ? undefined : wireOf.get(live);
      if (driven !== undefined) return driven;
      if (state === 'closed') throw new ExecutorError('closed', 'executor closed');
      refuseOtherIdentity(record);
      if (record.server === undefined) {
        throw new ExecutorError('no_server', `operation ${record.id} does not name its server`, {
          state: record.state,
        });
      }
      return getWire(record.server, record.wire.name, record.session);
    },
  };
  function logsOf(operationId: string, logOptions?: LogsOptions) {
    return followLogs(logsDeps, operationId, logOptions);
  }

  function inRollout(callNodeId: string): boolean {
    if (rolloutPercent >= 100) return true;
    const bucketOf = Number.parseInt(digestOf(callNodeId).slice(0, 8), 16) % 100;
    return bucketOf < rolloutPercent;
  }

  async function submitOnce(input: SubmitInput): Promise<OperationHandle> {
    refuseIfNotOpen();
    if (!inRollout(input.callNodeId)) {
      throw new ExecutorError(
        'not_in_rollout',
        `call node ${input.callNodeId} is outside the ${rolloutPercent}% rollout`,
      );
    }
    const digest = requestDigest(input.tool, input.args);
    const live = drivers.get(input.callNodeId);
    // C11: a submit of a call node in flight here is one more waiter on it, with this submit's budget.
    if (live !== undefined && !live.isStopped && live.record.requestDigest === digest) {
      return adopt(live.record, deadlineOf(input.budgetMs));
    }
    const wire = await getWire(input.server);
    if (disabledWires.has(wire.wire) && (await ledger.loadByCallNode(input.callNodeId)) === null) {
      throw new ExecutorError(
        'wire_disabled',
        `the ${wire.wire} wire takes no new submissions here; operations already on it still run to their end`,
      );
    }
    const now = clock.now();
    const deadlineAt = deadlineOf(input.budgetMs);
    const id = ids.unique('op');
    const credential = options.credentialOf?.(input.server) ?? null;
    const record: ToolOperation = {
      ...newOperation({
        id,
        callNodeId: input.callNodeId,
        requestDigest: digest,
        tool: { name: input.tool, descriptorVersion: input.toolVersion ?? 'unversioned' },
        body: input.args,
        wire: { name: wire.wire, adapterVersion: wire.version },
        submissionKey: ids.unique('skey'),
        executionEpoch: epoch,
        now,
        budgetMs: deadlineAt === null ? null : deadlineAt - now,
        shadow: options.shadow?.(input.tool) ?? false,
        ...(options.policy === undefined ? {} : { policy: options.policy }),
      }),
      server: input.server,
      ...(credential === null ? {} : { identity: identityFingerprint(id, credential) }),
      ...sessionOf(wire),
    };
    // C5: the same call node with the same request is the existing operation, never a second one.
    const { created, operation } = await ledger.create(record);
    if (!created) return adopt(operation, deadlineAt);
    const driver = register(operation, wire);
    driver.start(initialEffects(operation));
    return liveHandle(driver, epoch, clock, { attached: false, deadlineAt }, logsOf);
  }

  /** The HTTP session of the wire, kept with the operation (absent where the wire has none). */
  function sessionOf(wire: ClientWire): { session?: SessionBinding } {
    const session = wire.session?.();
    return session === undefined ? {} : { session };
  }

  const executor: Executor = {
    epoch,
    outbox,

    submit(input: SubmitInput) {
      // Concurrent submits of one call node share one attempt: never two drivers for one record.
      const pending = submitting.get(input.callNodeId);
      if (pending !== undefined) return pending;
      const attempt = submitOnce(input).finally(() => submitting.delete(input.callNodeId));
      submitting.set(input.callNodeId, attempt);
      return attempt;
    },

    async handle(callNodeId) {
      const live = drivers.get(callNodeId);
      if (live !== undefined) return liveHandle(live, epoch, clock, { attached: true, deadlineAt: null }, logsOf);
      const record = await ledger.loadByCallNode(callNodeId);
      if (record === null) return null;
      return isSettled(record.state) ? settledHandle(record, ledger, clock, logsOf) : null;
    },

    async attach(callNodeId, waitOptions: WaitOptions = {}) {
      refuseIfNotOpen();
      const deadlineAt = deadlineOf(waitOptions.budgetMs);
      const live = drivers.get(callNodeId);
      const record = live !== undefined && !live.isStopped ? live.record : await ledger.loadByCallNode(callNodeId);
      return record === null ? null : adopt(record, deadlineAt);
    },

    async resume(waitOptions: WaitOptions = {}) {
      refuseIfNotOpen();
      const deadlineAt = deadlineOf(waitOptions.budgetMs);
      const records = await ledger.listByState(IN_FLIGHT_STATES, RESUME_LIMIT);
      const handles: OperationHandle[] = [];
      for (const record of records) {
        try {
          handles.push(await adopt(drivers.get(record.callNodeId)?.record ?? record, deadlineAt));
        } catch (error) {
          logger.error('cannot resume operation', { operationId: record.id, error: String(error) });
        }
      }
      return handles;
    },

    async rollback() {
      refuseIfNotOpen();
      state = 'rolled_back';
      const newEpoch = await ledger.bumpEpoch();
      const reason = new ExecutorError('rolled_back', `epoch ${newEpoch} took over; this executor stopped driving`);
      await Promise.all([...drivers.values()].map((driver) => driver.stop(reason)));
      return newEpoch;
    },

    logs: logsOf,

    events: (operationId, eventOptions) => followEvents(logsDeps, operationId, eventOptions),

    async readLogs(operationId, request = {}) {
      const record = await ledger.load(operationId);
      if (record === null) throw new ExecutorError('no_task', `operation ${operationId} is not in the ledger`);
      return readLogPage(logsDeps, record, request);
    },

    async close() {
      if (state === 'closed') return;
      state = 'closed';
      closing.abort();
      const reason = new ExecutorError('closed', 'executor closed; the operation stays in the ledger');
      await Promise.all([...drivers.values()].map((driver) => driver.stop(reason)));
      outbox.close();
      const open = await Promise.allSettled([...new Set(wires.values())]);
      const unique = new Set(open.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : [])));
      await Promise.allSettled([...unique].map((wire) => wire.close()));
    },
  };
  return executor;
}
