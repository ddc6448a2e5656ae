/** Client wire adapters and the channels under them (see `../wire-port.ts` for the port). */
export { connectServer, negotiate, WireUnavailableError } from './negotiate.js';
export type { ClientWireName, ConnectOptions, ServerTarget, WireChoice } from './negotiate.js';
export { createHttpConnection, DEFAULT_REQUEST_TIMEOUT_MS } from './http-channel.js';
export type { HttpConnectionOptions } from './http-channel.js';
export { createStdioConnection } from './stdio-channel.js';
export type { StdioConnectionOptions } from './stdio-channel.js';
export type { Era, RpcConnection, NotificationListener } from './connection.js';
export { createTasksExtWire, TASKS_EXT_ADAPTER_VERSION } from './tasks-ext/index.js';
export type { TasksExtWireOptions } from './tasks-ext/index.js';
export { createRev20251125Wire, REV_2025_ADAPTER_VERSION } from './rev2025-11-25/index.js';
export type { Rev20251125WireOptions } from './rev2025-11-25/index.js';
export { RpcErrorFailure, isRpcError, RPC_CODES } from './rpc-error.js';
