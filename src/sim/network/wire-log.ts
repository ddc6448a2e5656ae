import type { TaskStatus } from '../../core/task.js';

/**
 * What crossed the simulated network, as the checkers need it: every request sent, and every
 * answer the client actually received (after the faults), per operation.
 */
export type WireEventKind = 'send' | 'answer' | 'error' | 'throttled' | 'timeout' | 'unavailable' | 'malformed';

export interface WireEvent {
  readonly at: number;
  readonly id: number;
  readonly op: string | null;
  readonly method: string;
  readonly kind: WireEventKind;
  readonly taskId?: string;
  /** Status carried by an answer (`tasks/get`, create, lookup). */
  readonly status?: TaskStatus;
  /** Canonical JSON of the terminal payload an answer carried (result or error), for C2. */
  readonly payload?: string;
  readonly retryAfterMs?: number;
  /** `tasks/update`: the keys sent. `tasks/get` answers: outstanding input keys. */
  readonly keys?: readonly string[];
  /** JSON-RPC error reason (`data.reason`) of an error answer. */
  readonly reason?: string;
}

export class WireLog {
  readonly events: WireEvent[] = [];
  /** S8 probes whose foreign-owner and unknown-id answers differed. */
  readonly s8Leaks: string[] = [];
  /** Client-visible answers that named another task than the one asked about. */
  misdirected = 0;
  /** Expiry partitions: the client was cut off from one operation's task from `from` until `until`. */
  readonly partitions: { readonly op: string | null; readonly from: number; readonly until: number }[] = [];

  add(event: WireEvent): void {
    this.events.push(event);
  }

  forOp(op: string): WireEvent[] {
    return this.events.filter((e) => e.op === op);
  }
}
