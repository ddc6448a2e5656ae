/**
 * A wire that tells a listener every task snapshot its reads decode: submit and status answers,
 * and, since the executor follows a task on our servers by its ordered events, the snapshot each
 * page of events moves the task to. What a display (the CLI's bar) or a front (the bridge's
 * pushes) shows comes from here, whichever way the executor read it.
 */
import type { ClientWire, ServerEvent, TaskSnapshot } from './wire-port.js';
import { wrapWireRequests } from './wrap-wire.js';

/** The same wire, reporting each decoded snapshot to `listener`; every other member passes through. */
export function observeSnapshots(wire: ClientWire, listener: (snapshot: TaskSnapshot) => void): ClientWire {
  const last = new Map<string, TaskSnapshot>();
  const seen = (snapshot: TaskSnapshot): void => {
    // Only the tasks still followed are kept: a terminal one is not read again.
    if (isFinal(snapshot)) last.delete(snapshot.taskId);
    else last.set(snapshot.taskId, snapshot);
    listener(snapshot);
  };
  return wrapWireRequests(wire, {
    answered: (done) => {
      if (done.request === 'submit' && done.answer.kind === 'task') seen(done.answer);
      if (done.request === 'getStatus') seen(done.answer);
      if (done.request === 'events' && done.answer.kind === 'page' && done.answer.events.length > 0) {
        const [taskId] = done.args;
        const page = done.answer;
        const moved = applyEvents(last.get(taskId) ?? { taskId, status: page.status }, page.events);
        seen(page.pollIntervalMs === undefined ? moved : { ...moved, pollIntervalMs: page.pollIntervalMs });
      }
    },
  });
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
