/**
 * A wire that tells a listener every task snapshot its reads decode: submit and status answers,
 * and, since the executor follows a task on our servers by its ordered events, the snapshot each
 * page of events moves the task to. What a display (the CLI's bar) or a front (the bridge's
 * pushes) shows comes from here, whichever way the executor read it.
 */
import type { ClientWire, EventsRequest, ServerEvent, TaskSnapshot } from './wire-port.js';

/** The same wire, reporting each decoded snapshot to `listener`; every other member passes through. */
export function observeSnapshots(wire: ClientWire, listener: (snapshot: TaskSnapshot) => void): ClientWire {
  const last = new Map<string, TaskSnapshot>();
  const seen = (snapshot: TaskSnapshot): void => {
    // Only the tasks still followed are kept: a terminal one is not read again.
    if (isFinal(snapshot)) last.delete(snapshot.taskId);
    else last.set(snapshot.taskId, snapshot);
    listener(snapshot);
  };
  const events = wire.events?.bind(wire);
  return {
    ...wire,
    wire: wire.wire,
    version: wire.version,
    ...(events === undefined
      ? {}
      : {
          events: async (taskId: string, request: EventsRequest, signal?: AbortSignal) => {
            const answer = await events(taskId, request, signal);
            if (answer.kind === 'page' && answer.events.length > 0) {
              const moved = applyEvents(last.get(taskId) ?? { taskId, status: answer.status }, answer.events);
              seen(answer.pollIntervalMs === undefined ? moved : { ...moved, pollIntervalMs: answer.pollIntervalMs });
            }
            return answer;
          },
        }),
    submit: async (request, signal) => {
      const answer = await wire.submit(request, signal);
      if (answer.kind === 'task') seen(answer);
      return answer;
    },
    getStatus: async (taskId, signal) => {
      const snapshot = await wire.getStatus(taskId, signal);
      seen(snapshot);
      return snapshot;
    },
  };
}

const isFinal = (snapshot: TaskSnapshot): boolean =>
  snapshot.status === 'completed' || snapshot.status === 'failed' || snapshot.status === 'cancelled';

/**
 * A snapshot moved on by a page of events: a status event sets the status and its message, a
 * progress event the progress and, with a message, the status message (as the server's own
 * `tasks/get` would show them).
 */
export function applyEvents(start: TaskSnapshot, events: readonly ServerEvent[]): TaskSnapshot {
  let snapshot = start;
  for (const event of events) {
    if (event.kind === 'status') {
      const { inputRequests: _asked, outcome: _outcome, statusMessage: _said, ...rest } = snapshot;
      snapshot = {
        ...rest,
        status: event.status,
        ...(event.statusMessage === null ? {} : { statusMessage: event.statusMessage }),
      };
    } else if (event.kind === 'progress') {
      snapshot = {
        ...snapshot,
        progress: event.progress,
        ...(event.progress.message === undefined ? {} : { statusMessage: event.progress.message }),
      };
    }
  }
  return snapshot;
}
