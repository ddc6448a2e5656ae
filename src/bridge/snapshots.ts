/**
 * What upstreams last said about each task (status message, progress), seen on the wire as the
 * executor reads it, so answers show it and progress reaches a host that asked for it.
 */
import type { ClientWire, TaskSnapshot } from '../executor/wire-port.js';

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
    // 2025 side channel's terminal reports, event reads, pushes): only the two reads are watched.
    return {
      ...wire,
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
