/**
 * The thinnest 2026-07-28 Tasks-extension client: one stateless POST per request, the envelope in
 * `_meta`, the `Mcp-Method`/`Mcp-Name` headers the fast path requires, JSON or SSE answers. It is
 * the tests' raw request (`rpc` in test/server/helpers.ts), so the bench sends what the wire tests
 * send. Only our servers speak this wire (B0 and the floor have 2025-11-25 only).
 */
import { rpc } from '../../test/server/helpers.js';

export interface TasksExtClient {
  /** One request; resolves with its `result`, rejects with the JSON-RPC error's message. */
  call(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** `token`: sent as `Authorization: Bearer <token>` (our bench server binds tasks to it). */
export function tasksExtClient(url: string, token?: string): TasksExtClient {
  return {
    async call(method, params) {
      const answer = await rpc(url, method, params, token === undefined ? {} : { token });
      if (answer.result === undefined) throw new Error(`${method} failed: ${JSON.stringify(answer.error)}`);
      return answer.result as Record<string, unknown>;
    },
  };
}
