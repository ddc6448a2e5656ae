/**
 * Wake-ups between the parts that share a store: the runner (cancel, input), the wires (status
 * notifications) and, with PostgreSQL, other nodes. An optimisation only: every reader also polls
 * the store within a documented bound, so a lost event delays, never breaks.
 */
export type TaskEventKind =
  | 'created'
  | 'cancelled'
  | 'input_requested'
  | 'input_received'
  | 'progress'
  | 'terminal'
  /** New lines in the task's own log (readers fetch them by cursor). */
  | 'log';

export interface TaskEvent {
  readonly taskId: string;
  readonly kind: TaskEventKind;
  /**
   * Only this process needs it: a task created already claimed by this node has no claim to make
   * elsewhere, and no reader anywhere knows its id yet. Delivered here as any event; a cross-node
   * transport (PostgreSQL NOTIFY) does not send it.
   */
  readonly local?: boolean;
}

export interface TaskEvents {
  publish(event: TaskEvent): void;
  /** Returns the unsubscribe function. */
  subscribe(listener: (event: TaskEvent) => void): () => void;
}

/** In-process events: enough for one node (SQLite or memory). */
export function createLocalEvents(): TaskEvents {
  const listeners = new Set<(event: TaskEvent) => void>();
  return {
    publish(event) {
      for (const listener of [...listeners]) listener(event);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
