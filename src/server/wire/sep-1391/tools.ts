import type { Server, ServerContext } from '@modelcontextprotocol/server';
import type { LegacyListedTool } from '../rev2025-11-25/index.js';
import { isAsyncClient, knowsTasks } from './client.js';

/**
 * SEP-1391's `tools/list` rules (reference 2.6), applied on top of the 2025 list:
 * - an async-capable client (L-06) sees `invocationMode` on every tool, exactly one mode each:
 *   `required` (async-only) and `optional` (hybrid, L-05) tools are `async`, `forbidden` ones `sync`;
 * - a client on a protocol version older than 2025-11-25 that did not declare async support sees
 *   neither the field nor the async-only tools (L-02, L-04); hybrid tools stay as ordinary sync
 *   tools (L-07), and `execution` is dropped too, since that version does not define it;
 * - a 2025-11-25 client keeps every tool: `required` tools are callable there as 2025 tasks.
 */
export function projectTools(
  tools: readonly LegacyListedTool[],
  server: Server,
  ctx: ServerContext,
): LegacyListedTool[] {
  if (isAsyncClient(server)) {
    return tools.map((tool) => ({
      ...tool,
      invocationMode: tool.execution?.taskSupport === 'forbidden' ? 'sync' : 'async',
    }));
  }
  if (knowsTasks(server, ctx)) return tools.map(withoutInvocationMode);
  return tools
    .filter((tool) => tool.execution?.taskSupport !== 'required')
    .map((tool) => {
      const { execution: _execution, invocationMode: _mode, ...rest } = tool;
      return rest;
    });
}

function withoutInvocationMode(tool: LegacyListedTool): LegacyListedTool {
  const { invocationMode: _mode, ...rest } = tool;
  return rest;
}
