/** `terminus bridge` as a library: an MCP server for hosts that cannot wait (see `createBridge`). */
export { createBridge, DEFAULT_INLINE_WAIT_MS } from './bridge.js';
export type { Bridge, BridgeMetrics, BridgeOptions } from './bridge.js';
export type { BridgeHttpHandle, MetricsSource } from './http.js';
export { DEFAULT_LIST_DEADLINE_MS, type MissingUpstream } from './catalog.js';
export { MISSING_UPSTREAMS_META, OPERATION_URI_PREFIX } from './server.js';
export { DEFAULT_MAX_TASK_TTL_MS, FRONTS, type Front } from './task-front.js';
