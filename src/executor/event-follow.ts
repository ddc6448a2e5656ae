/**
 * Following a task's ordered events from the client (issue 32): each status change, progress
 * report, input round and log line once, in seq order, from a cursor. After a broken stream, a
 * restart or a detach the reader passes the cursor it holds (`follower.cursor`) and reads on from
 * there: nothing is re-read and nothing is skipped. Reading is not an effect on the operation:
 * nothing here steps the machine or writes the ledger.
 *
 * The cursor read is the truth; a pushed notification (a status push, a log push) only ends the
 * wait before the next read. Failed reads are retried as log reads are (1 s doubling to 30 s,
 * Retry-After honoured, `onRetry` told), each read takes a token of the executor's QPS bucket (C6).
 * A server without the method (not ours) is `ExecutorError` `no_events`: callers keep polling the
 * status, as they do for any server.
 */
import { isTerminal } from '../core/task.js';
import { ExecutorError, type EventFollower, type EventsOptions } from './executor-types.js';
import type { LogsDeps } from './logs.js';
import type { ToolOperation } from './operation.js';
import { pushWake } from './push-wake.js';
import { isSettled } from './transitions.js';
import type { ClientWire, EventPage, ServerEvent, WireStatusAnswer } from './wire-port.js';
import { WireFailure } from './wire-port.js';

/** Events per read while catching up (the server's maximum is 1000). */
export const EVENT_PAGE_LIMIT = 500;
const RETRY_MAX_MS = 30_000;
const TASK_ID_POLL_MS = 200;

function noTask(record: ToolOperation): ExecutorError {
  return new ExecutorError('no_task', `operation ${record.id} has no task on the server (${record.state})`, {
    state: record.state,
  });
}

async function readPage(
  deps: LogsDeps,
  wire: ClientWire,
  record: ToolOperation,
  cursor: string | undefined,
  signal?: AbortSignal,
): Promise<EventPage> {
  if (wire.events === undefined) {
    throw new ExecutorError('no_events', `the ${wire.wire} client reads no ordered events`);
  }
  await deps.bucket.take(signal);
  let answer;
  try {
    answer = await wire.events(
      record.taskId as string,
      { ...(cursor === undefined ? {} : { cursor }), limit: EVENT_PAGE_LIMIT },
      signal,
    );
  } catch (error) {
    if (error instanceof WireFailure && error.kind === 'not_found') {
      throw new ExecutorError('no_task', `the server does not know task ${record.taskId} of operation ${record.id}`, {
        state: record.state,
        cause: error,
      });
    }
    throw error;
  }
  if (answer.kind === 'unsupported') {
    throw new ExecutorError(
      'no_events',
      `this server keeps no ordered task events (${record.server ?? record.wire.name})`,
    );
  }
  const { kind: _kind, ...page } = answer;
  return page;
}

/** The events of ledger operation `operationId` as an `EventFollower` (see `EventsOptions`). */
export function followEvents(deps: LogsDeps, operationId: string, options: EventsOptions = {}): EventFollower {
  const { clock, ledger } = deps;
  const follow = options.follow ?? true;
  const interval = options.intervalMs ?? 1_000;
  const state = {
    cursor: options.cursor,
    seq: 0,
    status: null as WireStatusAnswer | null,
    done: false,
  };
  // A push about the task (status or log lines) marks the next read due; the read is what yields.
  const pushes = pushWake(clock, options.signal);
  const pause = (ms: number): Promise<void> => pushes.pause(ms);
  const listen = (wire: ClientWire, taskId: string): void =>
    pushes.listen(taskId, (seen) => [
      wire.onLogsHint?.(seen),
      wire.onStatusHint?.((id) => seen(id)),
      wire.watchLogs?.(taskId),
    ]);

  async function* events(): AsyncGenerator<ServerEvent> {
    const signal = options.signal;
    const aborted = (): boolean => signal?.aborted === true;
    let failures = 0;
    while (!aborted()) {
      const record = await ledger.load(operationId);
      if (record === null) throw new ExecutorError('no_task', `operation ${operationId} is not in the ledger`);
      if (record.taskId === null) {
        if (isSettled(record.state) || !follow) throw noTask(record);
        await pause(Math.min(interval, TASK_ID_POLL_MS));
        continue;
      }
      const wire = await deps.wireOf(record);
      let page: EventPage;
      try {
        page = await readPage(deps, wire, record, state.cursor, signal);
        failures = 0;
      } catch (error) {
        if (aborted()) return;
        if (!(error instanceof WireFailure) || error.kind === 'rejected') throw error;
        failures += 1;
        if (!follow && failures >= 3) throw error;
        const delay = Math.max(Math.min(RETRY_MAX_MS, 1_000 * 2 ** (failures - 1)), error.retryAfterMs ?? 0);
        options.onRetry?.(error, delay);
        await pause(delay);
        continue;
      }
      state.status = page.status;
      for (const event of page.events) {
        // The cursor moves with each event handed out: a consumer that stops mid-page resumes after it.
        state.seq = event.seq;
        state.cursor = page.events.at(-1) === event ? page.cursor : cursorAt(page.cursor, event.seq);
        yield event;
      }
      state.cursor = page.cursor;
      if (page.done || (isTerminal(page.status) && page.events.length === 0 && page.lastSeq <= state.seq)) {
        state.done = true;
        return;
      }
      if (page.events.length >= EVENT_PAGE_LIMIT) continue;
      if (!follow) return;
      listen(wire, record.taskId);
      await pause(interval);
    }
  }

  async function* following(): AsyncGenerator<ServerEvent> {
    try {
      yield* events();
    } finally {
      pushes.stop();
    }
  }

  return {
    get cursor() {
      return state.cursor;
    },
    get seq() {
      return state.seq;
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

/** Our cursor `<seq>.<tag>` moved to another seq of the same task (the tag is the task's). */
function cursorAt(cursor: string, seq: number): string {
  const dot = cursor.indexOf('.');
  return dot < 0 ? cursor : `${seq}${cursor.slice(dot)}`;
}
