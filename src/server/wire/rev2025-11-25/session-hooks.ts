import type { Server } from '@modelcontextprotocol/server';
import type { TaskRecord } from '../../../core/task.js';

/**
 * What a connection that lives longer than one request (a legacy HTTP session, stdio) offers the
 * wire's handlers: a place to follow the tasks created on it, for `notifications/tasks/status` and
 * progress. Per-request servers (the stateless leg) have none.
 */
export interface SessionHooks {
  taskCreated(task: TaskRecord, progressToken: string | number | undefined, options?: FollowOptions): void;
  /**
   * SEP-1391 L-22: a later `notifications/cancelled` naming this `tools/call` request id cancels the
   * task. Only where the connection can see its own notifications (the sessionful HTTP leg).
   */
  cancelOnNotification?(requestId: string | number, task: TaskRecord): void;
}

export interface FollowOptions {
  /** Push `notifications/tasks/status` (a 2025-11-25 message); default true. */
  readonly statusNotifications?: boolean;
  /** Extra params on each `notifications/progress`, e.g. SEP-1391's `_operation` (L-12). */
  readonly progressParams?: Record<string, unknown>;
}

const hooks = new WeakMap<Server, SessionHooks>();

export function attachSession(server: Server, session: SessionHooks): void {
  hooks.set(server, session);
}

export function sessionOf(server: Server): SessionHooks | undefined {
  return hooks.get(server);
}
