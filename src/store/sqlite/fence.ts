import type { Database } from 'better-sqlite3';
import { leaseLost, TerminusError } from '../../core/errors.js';
import { isTerminal, type TaskRecord } from '../../core/task.js';
import type { Fence } from '../port.js';
import { TASK_COLUMNS, taskStatement, toRecord, type TaskValues } from './row.js';

/** The fence every write after a claim carries (S3); bind it with `fenceParams`. */
export const FENCE = `id = @taskId AND lease_owner = @workerId AND epoch = @epoch`;

const SELECT_FENCED = `SELECT ${TASK_COLUMNS} FROM tasks WHERE ${FENCE}`;

/** The task if the fence still holds; else `lease_lost`, and the caller writes nothing (S3). */
export function selectFenced(db: Database, fence: Fence): TaskRecord {
  const row = taskStatement(db, SELECT_FENCED).get(fenceParams(fence)) as TaskValues | undefined;
  if (row === undefined) throw leaseLost(fence.taskId, fence.epoch);
  return toRecord(row);
}

/** Progress, checkpoints and input requests never touch a terminal task (S2). */
export function assertLive(task: TaskRecord): void {
  if (isTerminal(task.status)) {
    throw new TerminusError('already_terminal', `task ${task.id} is ${task.status}`, {
      details: { taskId: task.id, status: task.status },
    });
  }
}

/**
 * Explains a fenced UPDATE that changed no row, never a silent no-op: `lease_lost` when the fence
 * no longer holds, `already_terminal` when it holds but the task is terminal.
 */
export function noRowUpdated(db: Database, fence: Fence): never {
  assertLive(selectFenced(db, fence));
  throw new TerminusError('internal', `fenced write to task ${fence.taskId} changed no row`);
}

export function fenceParams(fence: Fence): { taskId: string; workerId: string; epoch: number } {
  return { taskId: fence.taskId, workerId: fence.workerId, epoch: fence.epoch };
}
