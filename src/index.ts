/**
 * mcp-terminus: durable long-running MCP tool calls.
 * @packageDocumentation
 */
export type {
  TaskRecord,
  TaskStatus,
  TerminalStatus,
  WireName,
  RpcError,
  Progress,
  InputRequest,
} from './core/task.js';
export { TASK_STATUSES, TERMINAL_STATUSES, WIRES, isTerminal } from './core/task.js';
export { TerminusError, isTerminusError, ERROR_CODES } from './core/errors.js';
export type { ErrorCode } from './core/errors.js';
export type { Clock, Random, Ids, Logger } from './core/ports.js';
export { silentLogger } from './core/ports.js';
export { systemClock, systemIds, systemRandom } from './core/system.js';
export type { TaskStore } from './store/port.js';
export { defineTaskTool, ToolRpcError } from './runner/tool.js';
export type { TaskToolDefinition, TaskContext, TaskSupport, ToolResult, InputReply } from './runner/tool.js';
export type { ToolAnnotations, ToolIcon } from './runner/tool.js';
export type {
  NewTask,
  NewTaskLease,
  CreateOutcome,
  KeyLookup,
  ListQuery,
  TaskPage,
  CancelOutcome,
  ClaimRequest,
  ClaimedTask,
  Fence,
  FinishInput,
  FinishOutcome,
} from './store/port.js';
export { createMemoryTaskStore } from './store/memory/index.js';
export { createEngine } from './runner/engine.js';
export type { EngineOptions } from './runner/engine.js';
export type { WorkerThreadsOptions } from './runner/threads/pool.js';
export { createTerminusServer } from './server/terminus-server.js';
export type { TerminusServer, TerminusServerOptions, ServeStdioOptions } from './server/terminus-server.js';
export { createTerminus } from './server/create-terminus.js';
export type { CreateTerminusOptions, Terminus } from './server/create-terminus.js';
export type { InstallContext } from './server/install.js';
export { stderrLogger } from './server/stderr-logger.js';
export type { LogLevel } from './server/stderr-logger.js';
export type { HttpServerHandle, ServeHttpOptions } from './server/http/serve.js';
export { route } from './server/http/routes.js';
export type { HttpRoute, HttpHandler, HttpRequestInfo } from './server/http/routes.js';
export type { WireAdapter, WireDeps, Era } from './server/wire/adapter.js';
export type { Preflight, PreflightCall, PreflightOutcome, PreflightQuestion } from './server/preflight.js';
export { ANONYMOUS_OWNER, STDIO_OWNER, ownerOf } from './server/owner.js';
export {
  tasksExtensionWire,
  LOOKUP_METHOD,
  SUBMISSION_KEY_META,
  TASKS_EXTENSION,
} from './server/wire/tasks-ext/index.js';
// Every server wire and the registry that serves them (issue 12 "Also"); the 2025-11-25 server wire
// is `createRev20251125ServerWire` here, since `createRev20251125Wire` is the executor's client wire.
export { createWireRegistry, parseWireName } from './server/wire/registry.js';
export type { WireRegistry, WireRegistration, WireRegistryOptions } from './server/wire/registry.js';
export { createRev20251125Wire as createRev20251125ServerWire } from './server/wire/rev2025-11-25/index.js';
export type { Rev20251125Options, LegacyToolExtension, LegacyListedTool } from './server/wire/rev2025-11-25/index.js';
export { sep1391Wire, sep1391ToolExtension, SEP1391_CAPABILITY } from './server/wire/sep-1391/index.js';
export { aip151Wire } from './server/wire/aip-151/index.js';
export type { LegacyHttpLeg, PrecheckContext, RawRpcMessage } from './server/wire/adapter.js';
export { UNAVAILABLE_RPC_CODE } from './server/wire/retryable.js';
// Task logs (issue 18): the handler's ctx.log/ctx.output lines, read by cursor and pushed.
export type { LogLine, LogStream } from './core/log.js';
export { DEFAULT_LOG_LIMITS } from './core/log.js';
export type { LogLimits } from './runner/task-log.js';
export type { LogReadQuery, TaskLogPage } from './runner/engine-port.js';
export { LOGS_METHOD, LOGS_NOTIFICATION, LISTEN_LOGS_KEY } from './server/task-logs.js';
export type { WireLogLine, WireLogPage } from './server/task-logs.js';
export { MIN_ANONYMOUS_KEY_BITS, keyBits } from './server/anonymous.js';
export { createBearerAuth, createJwtAuth, firstOf, readJwks, readTokensFile } from './server/auth/index.js';
export type { Authenticate, BearerAuthOptions, JwtAuthOptions } from './server/auth/index.js';
export { demoTools } from './tools/demo/index.js';
export type {
  ToolOperation,
  LocalState,
  WireStatus,
  ReceiptStatus,
  HistoryEntry,
  Evidence,
  InputState,
  OperationPolicy,
  NewOperationInput,
} from './executor/operation.js';
export { LOCAL_STATES, DEFAULT_POLICY, isLocalState, newOperation } from './executor/operation.js';
export {
  TRANSITIONS,
  RECEIPT_WRITING_STATES,
  RECEIPTED_STATES,
  SETTLED_STATES,
  IN_FLIGHT_STATES,
  canTransition,
  isReceipted,
} from './executor/transitions.js';
export { next as nextOperation, initialEffects } from './executor/machine.js';
export type { StepResult, IgnoreReason, RejectReason } from './executor/machine.js';
export type { OperationEvent, OperationEventType, RetriedRequest } from './executor/events.js';
export type { Effect, EffectType, Acceptance } from './executor/effects.js';
export type {
  Ledger,
  AcceptOutcome,
  AcceptTerminalInput,
  AppliedStep,
  CreateOperationOutcome,
  OutboxRow,
  Receipt,
} from './executor/ledger-port.js';
export { DEFAULT_LEDGER_PATH } from './executor/ledger-port.js';
export { createMemoryLedger } from './executor/ledger/memory.js';
export { createExecutor, EXECUTOR_DEFAULTS } from './executor/executor.js';
export { ExecutorError, EXECUTOR_ERROR_CODES } from './executor/executor-types.js';
export type {
  Executor,
  ExecutorOptions,
  ExecutorErrorCode,
  Connector,
  SubmitInput,
  OperationHandle,
  OperationStatus,
  OperationActivity,
  WaitOptions,
  CancelOutcome as OperationCancelOutcome,
  ApprovalRequest,
  ValidationContext,
  Outbox,
  OutboxItem,
} from './executor/executor-types.js';
export { createTokenBucket } from './executor/token-bucket.js';
export { validateOutputSchemas, typedResult } from './executor/output-schemas.js';
export type { TokenBucket, TokenBucketOptions } from './executor/token-bucket.js';
export {
  connectServer,
  negotiate,
  WireUnavailableError,
  createHttpConnection,
  createStdioConnection,
  createTasksExtWire,
  createRev20251125Wire,
  createSep1391Wire,
  createAip151Wire,
  RpcErrorFailure,
  RPC_CODES,
} from './executor/adapters/index.js';
export type {
  ClientWireName,
  ConnectOptions,
  ServerTarget,
  WireChoice,
  HttpConnectionOptions,
  StdioConnectionOptions,
  Sep1391WireOptions,
  Aip151WireOptions,
  RpcConnection,
  Era as ClientEra,
} from './executor/adapters/index.js';
export { WireFailure } from './executor/wire-port.js';
export type {
  ClientWire,
  RpcChannel,
  WireFailureKind,
  TaskSnapshot,
  SubmitAnswer,
  SubmitRequest,
  KeyLookupAnswer,
  ResultAnswer,
  CancelAnswer,
  WireStatusAnswer,
  LogLine as ClientLogLine,
  LogPage as ClientLogPage,
  LogsAnswer,
  LogsRequest,
} from './executor/wire-port.js';
export type { LogFollower, LogsOptions } from './executor/executor-types.js';
export { LOG_POLL_MS } from './executor/logs.js';

// Operations: lifecycle logs, metrics, traces, health (issue 16).
export { combineObservers, silentObserver } from './runner/observer.js';
export type { LifecycleEvent, LifecycleKind, RunOutcome, TaskObserver } from './runner/observer.js';
export { lifecycleLog, lineLogger, LOG_FORMATS } from './telemetry/log.js';
export type { LifecycleLogOptions, LineLoggerOptions, LogFormat } from './telemetry/log.js';
export { createMetrics } from './telemetry/metrics.js';
export type { RequestLabels, TerminusMetrics } from './telemetry/metrics.js';
export { taskGauge } from './telemetry/task-gauge.js';
export type { TaskGaugeOptions } from './telemetry/task-gauge.js';
export { taskSpanContext, taskTracing, TRACER_NAME } from './telemetry/trace.js';
export { requestInstrument } from './telemetry/http.js';
export type { RequestInstrument } from './telemetry/http.js';
export { AsyncContextManager } from './telemetry/context.js';
export { readinessProbe } from './telemetry/health.js';
export type { Readiness, ReadinessOptions, ReadinessProbe } from './telemetry/health.js';
export { timedStore } from './telemetry/store.js';
export { executorMetrics } from './telemetry/executor.js';
export type { ExecutorMetrics } from './telemetry/executor.js';
export { executorTracing } from './telemetry/executor-trace.js';
export type { ExecutorTracing } from './telemetry/executor-trace.js';
export { withinRun } from './runner/observer.js';
export type { RunScope } from './runner/observer.js';
export { operationsRoutes } from './server/http/ops-routes.js';
export type { RequestFacts } from './server/http/serve.js';
export { createBridge, DEFAULT_INLINE_WAIT_MS, OPERATION_URI_PREFIX } from './bridge/index.js';
export type { Bridge, BridgeOptions, BridgeHttpHandle } from './bridge/index.js';
