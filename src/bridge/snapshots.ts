/**
 * What upstreams last said about each task (status message, progress), seen on the wire as the
 * executor reads it, so answers show it and progress reaches a host that asked for it.
 */
import { observeSnapshots } from '../executor/observe-snapshots.js';
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

  /** The same wire, reporting every snapshot its reads decode (submit, status and events answers); nothing else changes. */
  observe(wire: ClientWire): ClientWire {
    return observeSnapshots(wire, (snapshot) => {
      this.byTask.set(snapshot.taskId, snapshot);
      for (const listener of this.listeners) listener(snapshot);
    });
  }
}
