/** Operation handles: a live one over a driver, and a settled one read from the ledger. */
import type { Clock } from '../core/ports.js';
import type { OperationHandle, OperationStatus } from './executor-types.js';
import { ExecutorError } from './executor-types.js';
import type { OperationDriver } from './interpreter.js';
import type { Ledger } from './ledger-port.js';
import type { ToolOperation } from './operation.js';

export function liveHandle(driver: OperationDriver, epoch: number): OperationHandle {
  const { id: operationId, callNodeId } = driver.record;
  return {
    operationId,
    callNodeId,
    statuses: () => driver.status.subscribe(),
    result: () => driver.result(),
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
  };
}

/** A settled operation loaded from the ledger: nothing left to drive. */
export function settledHandle(record: ToolOperation, ledger: Ledger, clock: Clock): OperationHandle {
  const status: OperationStatus = {
    operationId: record.id,
    callNodeId: record.callNodeId,
    state: record.state,
    serverStatus: record.lastServerStatus,
    taskId: record.taskId,
    at: clock.now(),
    waitingStopped: record.waitingStoppedAt !== null,
  };
  return {
    operationId: record.id,
    callNodeId: record.callNodeId,
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
  };
}
