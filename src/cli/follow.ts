/**
 * Following an operation from the CLI: what an `OperationStatus` looks like on screen, and how a
 * command takes up an operation that is already in the ledger.
 */
import type { Executor, OperationHandle, OperationStatus } from '../executor/executor-types.js';
import type { ToolOperation } from '../executor/operation.js';
import type { DisplayStream, ProgressDisplay, ProgressView } from './render.js';
import { describeView } from './render.js';

/** The executor's side of a status only (state, server status, activity, cancel): no progress. */
export function stateView(status: OperationStatus): ProgressView {
  return {
    state: status.state,
    serverStatus: status.serverStatus,
    taskId: status.taskId,
    activity: status.activity ?? { kind: 'polling' },
    ...(status.cancel === undefined ? {} : { cancel: status.cancel }),
  };
}

/**
 * A progress report and the message that goes with it, always together: a report without a message
 * clears the one shown, so a bar never carries an older report's message (`100% (12/12) test_011 of
 * 12` was the count of the last report beside the message of an earlier one). `statusMessage` is the
 * server's own line for the task, shown before the progress message when both came in one answer.
 */
export function progressView(
  progress: { readonly done: number; readonly total?: number; readonly message?: string } | undefined,
  statusMessage?: string,
): ProgressView {
  return {
    ...(progress === undefined
      ? {}
      : { progress: { done: progress.done, ...(progress.total === undefined ? {} : { total: progress.total }) } }),
    message: statusMessage ?? progress?.message ?? '',
  };
}

/**
 * Takes up an operation of the ledger with a fresh wait budget (C11): `budgetMs` from now, `null`
 * unbounded, undefined the executor's default (`executor.attach`: never a second submission).
 */
export async function attachTo(
  executor: Executor,
  record: ToolOperation,
  budgetMs: number | null | undefined,
): Promise<OperationHandle> {
  const handle = await executor.attach(record.callNodeId, budgetMs === undefined ? {} : { budgetMs });
  if (handle === null) throw new Error(`operation ${record.id} is no longer in the ledger`);
  return handle;
}

/**
 * Several operations at once (`ops resume` without an id): one plain line per change of each, with
 * the operation id in front, since one redrawn line cannot show several.
 */
export class StatusLog {
  private readonly out: DisplayStream;
  private readonly progressOf: (taskId: string) => ProgressView | undefined;
  private readonly last = new Map<string, string>();
  /** While a question is asked, the last line of each operation waits here (`pause`/`resume`). */
  private held: Map<string, string> | null = null;

  /**
   * `progressOf`: a task's progress as its server last answered, else none shown (the statuses
   * carry the ledger's copy, stale after a detach: not shown).
   */
  constructor(out: DisplayStream, progressOf: (taskId: string) => ProgressView | undefined) {
    this.out = out;
    this.progressOf = progressOf;
  }

  async follow(handle: OperationHandle, now: () => number): Promise<void> {
    for await (const status of handle.statuses()) {
      const progress = status.taskId === null ? undefined : this.progressOf(status.taskId);
      const line = describeView({ ...stateView(status), ...progress }, now());
      if (this.last.get(handle.operationId) === line) continue;
      this.last.set(handle.operationId, line);
      if (this.held !== null) this.held.set(handle.operationId, line);
      else this.out.write(`${handle.operationId}  ${line}\n`);
    }
  }

  /** A question is being asked on the same stream: hold the lines (the last one of each is kept). */
  pause(): void {
    this.held ??= new Map();
  }

  /** The question was answered: the held lines, one per operation. */
  resume(): void {
    const held = this.held;
    this.held = null;
    for (const [operationId, line] of held ?? []) this.out.write(`${operationId}  ${line}\n`);
  }
}

/** A completed task did all its work: the bar ends at 100 % even if the last report was earlier. */
export function completeProgress(display: ProgressDisplay): void {
  const total = display.current.progress?.total;
  if (total === undefined || !(total > 0)) return;
  // The finished task's count, with no running task's message beside it.
  display.update(progressView({ done: total, total }));
  display.keep();
}
