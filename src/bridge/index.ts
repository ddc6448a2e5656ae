/** `terminus bridge` as a library: an MCP server for hosts that cannot wait (see `createBridge`). */
export { createBridge, DEFAULT_INLINE_WAIT_MS } from './bridge.js';
export type { Bridge, BridgeMetrics, BridgeOptions } from './bridge.js';
export type { BridgeHttpHandle, MetricsSource } from './http.js';
export { OPERATION_URI_PREFIX } from './server.js';
