/** Operation handles: a live one over a driver, and a settled one read from the ledger. */
import type { Clock } from '../core/ports.js';
import type { LogFollower, LogsOptions, OperationHandle } from './executor-types.js';
import { ExecutorError } from './executor-types.js';
import type { OperationDriver } from './interpreter.js';
import { toStatus } from './interpreter-status.js';
import type { Ledger, Receipt } from './ledger-port.js';
import type { ToolOperation } from './operation.js';

/** Who holds the handle (C11): whether it joined an existing operation, and its own wait deadline. */
export interface Waiter {
  readonly attached: boolean;
  /** This waiter's deadline (ms since the epoch); null = none of its own (the operation's applies). */
  readonly deadlineAt: number | null;
}

/** How a handle reads its operation's log: the executor's `logs`, bound to the operation id. */
export type LogsOf = (operationId: string, options?: LogsOptions) => LogFollower;

export function liveHandle(
  driver: OperationDriver,
  epoch: number,
  clock: Clock,
  waiter: Waiter,
  logsOf: LogsOf,
): OperationHandle {
  const { id: operationId, callNodeId } = driver.record;
  // Its own timer even when its deadline is the operation's: a later waiter may extend that one.
  const ownDeadline = (): number | null => waiter.deadlineAt;
  return {
    operationId,
    callNodeId,
    attached: waiter.attached,
    deadlineAt: waiter.deadlineAt ?? driver.record.policy.deadlineAt,
    statuses() {
      const at = ownDeadline();
      if (at === null) return driver.status.subscribe();
      const stop = new AbortController();
      const feed = driver.status.subscribe(stop.signal);
      return (async function* () {
        const timer = clock.sleep(Math.max(0, at - clock.now()), stop.signal).then(
          () => stop.abort(),
          () => undefined,
        );
        try {
          yield* feed;
        } finally {
          stop.abort();
          await timer;
        }
      })();
    },
    result() {
      const at = ownDeadline();
      const settled = driver.result();
      if (at === null) return settled;
      return untilDeadline(settled, at, clock);
    },
    async cancel() {
      const step = await driver.dispatch((record) => ({
        type: 'cancel_requested',
        epoch,
        expectedGeneration: record.cancelGeneration,
      }));
      if (step === null) return { requested: false, reason: 'stopped' };
      if (step.outcome === 'applied') return { requested: true };
      const state = driver.record.state;
      if (step.reason === 'no_task_id' && (state === 'SUBMITTING' || state === 'SUBMISSION_UNKNOWN')) {
        // No task id yet: the cancel is sent as soon as the server names the task.
        driver.markCancelOwed();
        return { requested: true, reason: 'after_submission' };
      }
      return { requested: false, reason: step.reason };
    },
    async detach() {
      await driver.dispatch({ type: 'budget_exhausted', epoch, reason: 'disconnect' });
    },
    logs: (options) => logsOf(operationId, options),
  };
}

/** `settled`, or `waiting_stopped` at `deadlineAt` if it comes first (the operation goes on: C9). */
function untilDeadline(settled: Promise<Receipt>, deadlineAt: number, clock: Clock): Promise<Receipt> {
  const stop = new AbortController();
  const budget = clock.sleep(Math.max(0, deadlineAt - clock.now()), stop.signal).then(() => {
    throw new ExecutorError('waiting_stopped', 'stopped waiting (budget); the task is untouched');
  });
  // The timer's own rejection on abort is observed here, never left unhandled.
  budget.catch(() => undefined);
  return Promise.race([settled, budget]).finally(() => stop.abort());
}

/** A settled operation loaded from the ledger: nothing left to drive. */
export function settledHandle(
  record: ToolOperation,
  ledger: Ledger,
  clock: Clock,
  logsOf: LogsOf,
  attached = true,
): OperationHandle {
  const status = toStatus(record, clock.now(), record.waitingStoppedAt !== null);
  return {
    operationId: record.id,
    callNodeId: record.callNodeId,
    attached,
    deadlineAt: null,
    async *statuses() {
      yield status;
    },
    async result() {
      const receipt = await ledger.getReceipt(record.callNodeId);
      if (receipt !== null) return receipt;
      throw new ExecutorError('never_created', `operation ${record.id} settled without a receipt`, {
        state: record.state,
      });
    },
    cancel: async () => ({ requested: false, reason: 'settled' }),
    detach: async () => undefined,
    logs: (options) => logsOf(record.id, options),
  };
}
