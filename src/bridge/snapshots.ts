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
    return {
      wire: wire.wire,
      version: wire.version,
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
      lookupKey: (key, signal) => wire.lookupKey(key, signal),
      fetchResult: (taskId, signal) => wire.fetchResult(taskId, signal),
      cancel: (taskId, signal) => wire.cancel(taskId, signal),
      sendInput: (taskId, responses, signal) => wire.sendInput(taskId, responses, signal),
      ...(wire.onStatusHint === undefined ? {} : { onStatusHint: wire.onStatusHint.bind(wire) }),
      // The executor listens for the tasks it waits on (one stream per connection).
      ...(wire.watchTask === undefined ? {} : { watchTask: wire.watchTask.bind(wire) }),
      // Task logs (issue 18): read by `terminus_logs`, never by the executor's machine.
      ...(wire.logs === undefined ? {} : { logs: wire.logs.bind(wire) }),
      ...(wire.onLogsHint === undefined ? {} : { onLogsHint: wire.onLogsHint.bind(wire) }),
      // The executor reconnects when the connection ends by itself (a stdio upstream that died).
      ...(wire.onClose === undefined ? {} : { onClose: wire.onClose.bind(wire) }),
      close: () => wire.close(),
    };
  }
}
