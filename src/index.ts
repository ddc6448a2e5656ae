/**
 * `mcp-terminus`: durable long-running MCP tool calls, for server authors. Define task tools
 * (`defineTaskTool`), add them to a server you already have (`createTerminus`) or serve them on
 * their own (`createEngine` + `createTerminusServer`), with the engine's and the stores' ports, the
 * errors, the injected clock/ids/random/logger, HTTP routes and auth.
 *
 * The other audiences have entries of their own: `mcp-terminus/client` (calling tools: the
 * executor, ledgers, handles, receipts), `mcp-terminus/wires` (the server wire adapters, their
 * registry, the engine commands they send), `mcp-terminus/telemetry` (metrics, traces, health,
 * lifecycle logs), `mcp-terminus/bridge` (hosts that cannot wait), `mcp-terminus/sqlite`,
 * `mcp-terminus/postgres` (the backends) and `mcp-terminus/testing` (the backends' contract suites).
 * @packageDocumentation
 * @module mcp-terminus
 */
export { defineTaskTool, ToolRpcError } from './runner/tool.js';
export type {
  TaskToolDefinition,
  TaskContext,
  TaskSupport,
  ToolResult,
  InputReply,
  ToolAnnotations,
  ToolIcon,
} from './runner/tool.js';
export { createTerminus } from './server/create-terminus.js';
export type { CreateTerminusOptions, Terminus } from './server/create-terminus.js';
export type { InstallContext } from './server/install.js';
export { createTerminusServer } from './server/terminus-server.js';
export type { TerminusServer, TerminusServerOptions, ServeStdioOptions } from './server/terminus-server.js';
export type { HttpServerHandle, ServeHttpOptions } from './server/http/serve.js';
export type { ServerLimits } from './server/limits.js';
export type { Preflight, PreflightCall, PreflightOutcome, PreflightQuestion } from './server/preflight.js';
export { createEngine } from './runner/engine.js';
export type { EngineOptions } from './runner/engine.js';
export type { TaskEngine } from './runner/engine-port.js';
export type { WorkersOptions } from './runner/workers/pool.js';
export type { LogLimits } from './runner/task-log.js';
export type { TaskStore } from './store/port.js';
export { createMemoryTaskStore } from './store/memory/index.js';
export type {
  TaskRecord,
  TaskStatus,
  TerminalStatus,
  WireName,
  RpcError,
  Progress,
  InputRequest,
  LateOutcome,
} from './core/task.js';
export { TASK_STATUSES, TERMINAL_STATUSES, isTerminal } from './core/task.js';
export { TerminusError, isTerminusError, ERROR_CODES } from './core/errors.js';
export type { ErrorCode } from './core/errors.js';
export type { Clock, Random, Ids, Logger } from './core/ports.js';
export { silentLogger } from './core/ports.js';
export { systemClock, systemIds, systemRandom } from './core/system.js';
export { stderrLogger } from './server/stderr-logger.js';
export type { LogLevel } from './server/stderr-logger.js';
export { route } from './server/http/routes.js';
export type { HttpRoute, HttpHandler, HttpRequestInfo } from './server/http/routes.js';
export { createBearerAuth, createJwtAuth, firstOf, readJwks, readTokensFile } from './server/auth/index.js';
export type { Authenticate, BearerAuthOptions, JwtAuthOptions } from './server/auth/index.js';
export { principalOf } from './server/owner.js';
export type { WebhookSettings } from './runner/webhooks.js';
