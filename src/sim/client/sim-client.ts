import type { EventFollower, EventsOptions } from '../../executor/executor-types.js';

/** One simulated executor process, as the series drives it (the real executor, `real.ts`). */
export interface SimClient {
  readonly alive: boolean;
  /** `budgetMs`: the waiter's budget (C11); absent = unbounded. */
  submit(callNodeId: string, tool: string, args: Record<string, unknown>, budgetMs?: number): Promise<void>;
  /** Takes up every in-flight operation of the ledger (after a crash). */
  resume(): Promise<void>;
  /** The caller's cancel; resolves `applied` or why not. */
  cancel(callNodeId: string): Promise<string>;
  /** C9: the caller goes away; local waiting stops. */
  detach(callNodeId: string): Promise<void>;
  /** A later waiter on the call node, with a fresh budget (C11: after a detach or a budget that ran out). */
  reattach(callNodeId: string): Promise<void>;
  /** `executor.events()` of the call node's operation; null while the ledger has none. */
  events(callNodeId: string, options: EventsOptions): Promise<EventFollower | null>;
  /** A crash: nothing of this process runs again. */
  kill(): void;
}
