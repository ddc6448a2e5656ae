import type { JSONRPCRequest, Server, ServerContext } from '@modelcontextprotocol/server';
import { decodeCallWebhook } from '../../../runner/webhooks.js';
import { ownerOf } from '../../owner.js';
import type { WireDeps } from '../adapter.js';
import { isAsyncClient } from './client.js';
import { DEFAULT_KEEP_ALIVE_S, REASONS } from './constants.js';
import { decodeAsyncCall, hasOperation } from './decode.js';
import { encodeAccepted, tokenOf } from './encode.js';
import { sessionOf } from '../rev2025-11-25/session-hooks.js';
import { invalidParams, toProtocolError } from './errors.js';

/**
 * Which `tools/call` requests are SEP-1391 async calls: any call carrying `operation`, and an
 * async-capable client's call of an async tool (its list shows `invocationMode: "async"`). A call
 * carrying the 2025 `task` stays with the 2025 wire.
 */
export function claims(request: JSONRPCRequest, server: Server, deps: WireDeps): boolean {
  const params = request.params;
  if (params?.task !== undefined) return false;
  if (hasOperation(params)) return true;
  if (!isAsyncClient(server)) return false;
  const tool = typeof params?.name === 'string' ? deps.engine.tools.get(params.name) : undefined;
  return tool !== undefined && tool.taskSupport !== 'forbidden';
}

/**
 * An async `tools/call` (L-09): creates the task with the client's `operation.token` as submission
 * key (S5: the same token and call return the same operation; a different call is `-32602`),
 * `keepAlive` seconds -> the engine's `keepAliveMs` (L-21), the call's own webhook from
 * `_meta["mcp-terminus.dev/webhook"]` (checked before anything is stored), and answers at once.
 */
export async function callAsync(
  request: JSONRPCRequest,
  ctx: ServerContext,
  server: Server,
  deps: WireDeps,
): Promise<Record<string, unknown>> {
  const call = decodeAsyncCall(request.params);
  const tool = deps.engine.tools.get(call.tool);
  if (tool === undefined) throw invalidParams(`Unknown tool: ${call.tool}`, REASONS.unknownTool, { tool: call.tool });
  if (tool.taskSupport === 'forbidden') {
    throw invalidParams(
      `Tool ${tool.name} is sync (invocationMode: "sync"); call it without operation`,
      REASONS.syncTool,
    );
  }
  try {
    const { task } = await deps.engine.submit({
      owner: ownerOf(ctx, deps.transport),
      tool: tool.name,
      args: call.args,
      wire: 'sep-1391',
      keepAliveMs: (call.keepAliveS ?? DEFAULT_KEEP_ALIVE_S) * 1000,
      ...(call.token === undefined ? {} : { submissionKey: call.token }),
      ...(call.webhook === undefined ? {} : { webhook: decodeCallWebhook(call.webhook) }),
    });
    // L-12: progress of the operation keeps flowing on the session, tagged with its token.
    const session = sessionOf(server);
    session?.taskCreated(task, call.progressToken, {
      statusNotifications: false,
      progressParams: { _operation: { token: tokenOf(task) } },
    });
    session?.cancelOnNotification?.(request.id, task);
    return encodeAccepted(task);
  } catch (error) {
    throw toProtocolError(error);
  }
}
