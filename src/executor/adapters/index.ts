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
export { createSep1391Wire, SEP_1391_ADAPTER_VERSION } from './sep-1391/index.js';
export type { Sep1391WireOptions } from './sep-1391/index.js';
export { createAip151Wire, AIP_151_ADAPTER_VERSION } from './aip-151/index.js';
export type { Aip151WireOptions } from './aip-151/index.js';
export { RpcErrorFailure, isRpcError, RPC_CODES } from './rpc-error.js';
