import type { Server, ServerContext } from '@modelcontextprotocol/server';
import { SEP1391_CAPABILITY, TASKS_PROTOCOL_VERSIONS } from './constants.js';

/**
 * What this connection's client speaks, from its `initialize` (sessionful legs and stdio). A
 * per-request server of the stateless leg never saw an `initialize`; it falls back to the
 * `MCP-Protocol-Version` header and treats the client as not async-capable.
 */
export function isAsyncClient(server: Server): boolean {
  // The initialize-scoped accessor is the 2025-era source of truth (the SDK marks it deprecated only
  // for the 2026-07-28 era, where the per-request envelope replaces it).

  const experimental = server.getClientCapabilities()?.experimental;
  return experimental !== undefined && experimental[SEP1391_CAPABILITY] !== undefined;
}

/** Whether the client's protocol version knows `execution.taskSupport` (2025-11-25 tasks). */
export function knowsTasks(server: Server, ctx: Pick<ServerContext, 'http'>): boolean {
  const version =
    server.getNegotiatedProtocolVersion() ?? ctx.http?.req?.headers.get('mcp-protocol-version') ?? undefined;
  // Unknown (a stateless request without the header): assume current, as the transport rules do.
  return version === undefined || TASKS_PROTOCOL_VERSIONS.includes(version);
}
