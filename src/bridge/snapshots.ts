/**
 * What upstreams last said about each task (status message, progress), seen on the wire as the
 * executor reads it, so answers show it and progress reaches a host that asked for it.
 */
import type { ClientWire, EventsRequest, ServerEvent, TaskSnapshot } from '../executor/wire-port.js';

export class Snapshots {
  private readonly byTask = new Map<string, TaskSnapshot>();
  private readonly listeners = new Set<(snapshot: TaskSnapshot) => void>();

  latest(taskId: string): TaskSnapshot | undefined {
    return this.byTask.get(taskId);
  }

  subscribe(listener: (snapshot: TaskSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The same wire, reporting every snapshot it decodes (submit and status answers); nothing else changes. */
  observe(wire: ClientWire): ClientWire {
    const seen = (snapshot: TaskSnapshot): void => {
      this.byTask.set(snapshot.taskId, snapshot);
      for (const listener of this.listeners) listener(snapshot);
    };
    // Every member passes through (the HTTP session the executor keeps with each operation, the
    // 2025 side channel's terminal reports, pushes): only the reads are watched. The executor
    // follows a task on our servers by its events, so their status and progress are snapshots too.
    return {
      ...wire,
      ...(wire.events === undefined
        ? {}
        : {
            events: async (taskId: string, request: EventsRequest, signal?: AbortSignal) => {
              const answer = await wire.events!(taskId, request, signal);
              if (answer.kind === 'page' && answer.events.length > 0) {
                seen(applyEvents(this.byTask.get(taskId) ?? { taskId, status: answer.status }, answer.events));
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
}

/**
 * A snapshot moved on by a page of events: a status event sets the status and its message, a
 * progress event the progress and, with a message, the status message (as the server's own
 * `tasks/get` would show them).
 */
function applyEvents(start: TaskSnapshot, events: readonly ServerEvent[]): TaskSnapshot {
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
