/**
 * Reading a task's own log from the client (issue 18): one page by cursor, or a follower that reads
 * page after page until the server says `done`. Reading is not an effect on the operation: nothing
 * here steps the machine or writes the ledger; it only reads the record to learn the task id.
 *
 * The cursor is the truth: a pushed notification of new lines (where the wire has one) only ends the
 * wait before the next read. A read that fails with no answer or a throttle is retried with back-off
 * (1 s doubling to 30 s, Retry-After honoured) and reported through `onRetry`; every read takes a
 * token of the executor's QPS bucket like any other request (C6). A read with `follow: false` gives
 * up after 3 failed attempts and throws the last failure.
 */
import type { Clock } from '../core/ports.js';
import { isTerminal } from '../core/task.js';
import { ExecutorError, type LogFollower, type LogsOptions } from './executor-types.js';
import type { Ledger } from './ledger-port.js';
import type { ToolOperation } from './operation.js';
import { pushWake } from './push-wake.js';
import type { TokenBucket } from './token-bucket.js';
import { isSettled } from './transitions.js';
import type { ClientWire, LogLine, LogPage, WireStatusAnswer } from './wire-port.js';
import { WireFailure } from './wire-port.js';

/** Between reads of a log that is caught up: 1 s, so a person sees a line about when it is written. */
export const LOG_POLL_MS = 1_000;
/** Lines per read while catching up (the server's maximum is 1000). */
export const LOG_PAGE_LIMIT = 500;
const RETRY_MAX_MS = 30_000;
const TASK_ID_POLL_MS = 200;

/** What the follower needs from the executor: the ledger (task id), the clock, the QPS bucket, the wire. */
export interface LogsDeps {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly bucket: TokenBucket;
  /** The wire the operation was created on (the live driver's, or a connection for it). */
  readonly wireOf: (record: ToolOperation) => Promise<ClientWire>;
}

async function recordOf(ledger: Ledger, operationId: string): Promise<ToolOperation> {
  const record = await ledger.load(operationId);
  if (record === null) throw new ExecutorError('no_task', `operation ${operationId} is not in the ledger`);
  return record;
}

function noTask(record: ToolOperation): ExecutorError {
  return new ExecutorError(
    'no_task',
    `operation ${record.id} has no task on the server (${record.state}): there is no log to read`,
    { state: record.state },
  );
}

/** One page after `after` (at most `limit` lines), or an `ExecutorError` (`no_task`, `no_logs`) / `WireFailure`. */
export async function readLogPage(
  deps: LogsDeps,
  record: ToolOperation,
  request: { readonly after?: number; readonly limit?: number },
  signal?: AbortSignal,
): Promise<LogPage> {
  if (record.taskId === null) throw noTask(record);
  const wire = await deps.wireOf(record);
  if (wire.logs === undefined) {
    throw new ExecutorError('no_logs', `this server keeps no task logs (the ${wire.wire} client has no log reads)`);
  }
  await deps.bucket.take(signal);
  let answer;
  try {
    answer = await wire.logs(record.taskId, request, signal);
  } catch (error) {
    if (error instanceof WireFailure && error.kind === 'not_found') {
      throw new ExecutorError(
        'no_task',
        `the server does not know task ${record.taskId} of operation ${record.id} (expired, or another server)`,
        { state: record.state, cause: error },
      );
    }
    throw error;
  }
  if (answer.kind === 'unsupported') {
    throw new ExecutorError('no_logs', `this server keeps no task logs (${record.server ?? record.wire.name})`);
  }
  const { kind: _kind, ...page } = answer;
  return page;
}

/** The log of ledger operation `operationId` as a `LogFollower` (see `LogsOptions`). */
export function followLogs(deps: LogsDeps, operationId: string, options: LogsOptions = {}): LogFollower {
  const { clock, ledger } = deps;
  const follow = options.follow ?? true;
  const interval = options.intervalMs ?? LOG_POLL_MS;
  const state = { next: options.after ?? 0, dropped: 0, status: null as WireStatusAnswer | null, done: false };

  // While following a named task: the wire's push listeners for it and its log watch (`watchLogs`:
  // on the Tasks extension the listen stream asks for log pushes, X-67). New lines, or a terminal
  // status (the log is complete: the read says `done`), make the next read due; a `working` push
  // (each new listen stream sends the task's state) brings no line.
  const pushes = pushWake(clock, options.signal);
  const pause = (ms: number, followed: boolean): Promise<void> => pushes.pause(ms, followed);
  const listen = (wire: ClientWire, taskId: string): void =>
    pushes.listen(taskId, (seen) => [
      wire.onLogsHint?.(seen),
      wire.onStatusHint?.((id, status) => {
        if (isTerminal(status)) seen(id);
      }),
      wire.watchLogs?.(taskId),
    ]);

  async function* lines(): AsyncGenerator<LogLine> {
    const signal = options.signal;
    const aborted = (): boolean => signal?.aborted === true;
    let failures = 0;
    while (!aborted()) {
      const record = await recordOf(ledger, operationId);
      if (record.taskId === null) {
        // Not named yet (SUBMITTING): a task that will exist is waited for, a call without one ends.
        if (isSettled(record.state) || !follow) throw noTask(record);
        // A local ledger read, not a request: looked at every 200 ms at most, whatever the interval.
        await pause(Math.min(interval, TASK_ID_POLL_MS), false);
        continue;
      }
      let page: LogPage;
      try {
        page = await readLogPage(deps, record, { after: state.next, limit: LOG_PAGE_LIMIT }, signal);
        failures = 0;
      } catch (error) {
        if (aborted()) return;
        if (!(error instanceof WireFailure) || error.kind === 'rejected' || error.kind === 'unauthorized') throw error;
        failures += 1;
        // A one-off read gives up after 3 failures (it must end); a follower keeps trying.
        if (!follow && failures >= 3) throw error;
        const backOff = Math.min(RETRY_MAX_MS, 1_000 * 2 ** (failures - 1));
        const delay = Math.max(backOff, error.retryAfterMs ?? 0);
        options.onRetry?.(error, delay);
        await pause(delay, false);
        continue;
      }
      for (const line of page.lines) {
        state.next = line.seq;
        yield line;
      }
      state.next = Math.max(state.next, page.next);
      state.dropped = page.dropped;
      state.status = page.status;
      if (page.done) {
        state.done = true;
        return;
      }
      if (page.lines.length >= LOG_PAGE_LIMIT) continue; // catching up: read the rest now
      if (!follow) return;
      listen(await deps.wireOf(record), record.taskId);
      await pause(interval, true);
    }
  }

  async function* following(): AsyncGenerator<LogLine> {
    try {
      yield* lines();
    } finally {
      pushes.stop();
    }
  }

  return {
    get next() {
      return state.next;
    },
    get dropped() {
      return state.dropped;
    },
    get status() {
      return state.status;
    },
    get done() {
      return state.done;
    },
    [Symbol.asyncIterator]: () => following(),
  };
}
