import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { isRecord } from '../../../core/json.js';
import { checkParamHeaders, mismatchResponse, paramHeadersOf } from '../../param-headers.js';
import { inputSchemaOf } from '../../tools-list.js';
import type { PrecheckContext, RawRpcMessage } from '../adapter.js';

/**
 * The `Mcp-Param-*` check (SEP-2243) of a 2026-07-28 `tools/call` of a task tool over HTTP, before
 * the SDK: a mismatch answers HTTP 400 with `-32020`, as the SDK does for its own tools. `callTool`
 * checks again where no precheck runs (an author's own HTTP mount), in-band.
 */
export function paramHeaderPrecheck(message: RawRpcMessage, context: PrecheckContext): Response | undefined {
  if (message.method !== 'tools/call' || context.header === undefined || !isRecord(message.params)) return undefined;
  const { name, arguments: args, _meta: meta } = message.params;
  if (!isRecord(meta) || !(PROTOCOL_VERSION_META_KEY in meta) || typeof name !== 'string') return undefined;
  const tool = context.deps.engine.tools.get(name);
  if (tool === undefined) return undefined;
  const error = checkParamHeaders(paramHeadersOf(inputSchemaOf(tool)), isRecord(args) ? args : {}, context.header);
  return error === undefined ? undefined : mismatchResponse(message.id, error);
}
