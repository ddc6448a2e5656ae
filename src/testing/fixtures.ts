import { expect } from 'vitest';
import { requestDigest } from '../core/digest.js';
import { isTerminusError, type ErrorCode, type TerminusError } from '../core/errors.js';
import type { TaskRecord } from '../core/task.js';
import type { Fence, NewTask, TaskStore } from '../store/port.js';

/** The suite's fixed clock origin: every `now` is T0 plus an explicit offset, never the wall clock. */
export const T0 = 1_800_000_000_000;

export const OWNER = 'alice';
export const STRANGER = 'mallory';
export const TOOL = 'report';

let sequence = 0;

/** A new task input; ids are unique within a process, so suites may share a backend. */
export function newTask(overrides: Partial<NewTask> = {}): NewTask {
  sequence += 1;
  const args = overrides.args ?? { n: sequence };
  const tool = overrides.tool ?? TOOL;
  return {
    id: `task-${sequence.toString().padStart(6, '0')}`,
    owner: OWNER,
    tool,
    args,
    requestDigest: requestDigest(tool, args),
    submissionKey: null,
    wire: 'mcp-tasks-ext',
    ttlMs: 60_000,
    keepAliveMs: null,
    pollIntervalMs: 1_000,
    now: T0,
    ...overrides,
  };
}

export async function created(store: TaskStore, overrides: Partial<NewTask> = {}): Promise<TaskRecord> {
  const outcome = await store.create(newTask(overrides));
  expect(outcome.created).toBe(true);
  return outcome.task;
}

/** Claims exactly `task` (by its tool) for `workerId` and returns the fence of that claim. */
export async function claimed(
  store: TaskStore,
  task: TaskRecord,
  options: { workerId?: string; now?: number; leaseMs?: number } = {},
): Promise<{ task: TaskRecord; fence: Fence }> {
  const workerId = options.workerId ?? 'worker-1';
  const claims = await store.claim({
    workerId,
    now: options.now ?? T0,
    leaseMs: options.leaseMs ?? 30_000,
    limit: 1,
    tools: [task.tool],
  });
  expect(claims.map((t) => t.id)).toEqual([task.id]);
  const got = claims[0] as TaskRecord;
  return { task: got, fence: { taskId: got.id, workerId, epoch: got.epoch } };
}

/** Asserts `promise` rejects with a `TerminusError` of `code` (never a bare Error or a message). */
export async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<TerminusError> {
  const outcome = await promise.then(
    (value: unknown) => ({ rejected: false as const, value }),
    (error: unknown) => ({ rejected: true as const, error }),
  );
  expect(outcome.rejected, `expected a rejection with code ${code}`).toBe(true);
  const error = outcome.rejected ? outcome.error : undefined;
  expect(isTerminusError(error), `expected a TerminusError, got ${String(error)}`).toBe(true);
  expect((error as TerminusError).code).toBe(code);
  return error as TerminusError;
}

/** Reads the task as its owner at `now` and asserts it is there. */
export async function mustGet(store: TaskStore, id: string, now = T0): Promise<TaskRecord> {
  const task = await store.get(OWNER, id, now);
  expect(task, `task ${id} should be readable`).not.toBeNull();
  return task as TaskRecord;
}
