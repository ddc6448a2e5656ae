/**
 * `mcp-terminus/bridge`: for hosts that cannot wait on a long tool call. `createBridge` serves the
 * tools of another MCP server as ordinary tools that answer within the host's timeout (an inline
 * wait, then a handle the model polls), while an executor with a ledger carries every call to its
 * one receipt.
 * @packageDocumentation
 * @module mcp-terminus/bridge
 */
export {
  createBridge,
  DEFAULT_INLINE_WAIT_MS,
  DEFAULT_LIST_DEADLINE_MS,
  MISSING_UPSTREAMS_META,
  OPERATION_URI_PREFIX,
} from './bridge/index.js';
export type {
  Bridge,
  BridgeOptions,
  BridgeMetrics,
  BridgeHttpHandle,
  MetricsSource,
  MissingUpstream,
} from './bridge/index.js';
