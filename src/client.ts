/**
 * `mcp-terminus/client`: calling task tools so that every call ends in exactly one receipt. The
 * executor (`createExecutor`) and what it hands back (operation handles, statuses, receipts), the
 * ledger port with the in-memory ledger (the SQLite and PostgreSQL ledgers are in
 * `mcp-terminus/sqlite` and `mcp-terminus/postgres`), the client wire adapters with their
 * negotiation and connections, the operation's local states, and typed results
 * (`validateOutputSchemas`, `typedResult`).
 * @packageDocumentation
 * @module mcp-terminus/client
 */
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
  CancelOutcome,
  ApprovalRequest,
  ValidationContext,
  Outbox,
  OutboxItem,
} from './executor/executor-types.js';
export { validateOutputSchemas, typedResult } from './executor/output-schemas.js';
export { createTokenBucket } from './executor/token-bucket.js';
export type { TokenBucket, TokenBucketOptions } from './executor/token-bucket.js';
export type { EventFollower, EventsOptions, LogFollower, LogsOptions } from './executor/executor-types.js';
export { LOG_POLL_MS } from './executor/logs.js';

// The ledger: the executor's durable record of every operation.
export type {
  Ledger,
  AcceptOutcome,
  AcceptTerminalInput,
  AppliedStep,
  CreateOperationOutcome,
  OutboxRow,
  PruneInput,
  Receipt,
} from './executor/ledger-port.js';
export { DEFAULT_LEDGER_PATH } from './executor/ledger-port.js';
export { createMemoryLedger } from './executor/ledger/memory.js';

// An operation: its record, local states and the events and effects the ledger stores with it.
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
  ServerReport,
  ObservedTerminal,
  Attempts,
  PreTaskInput,
  Progress,
  RetryCause,
  SessionBinding,
  EventCursor,
} from './executor/operation.js';
export {
  LOCAL_STATES,
  DEFAULT_POLICY,
  REDACTED_SESSION_ID,
  isLocalState,
  newOperation,
  redactOperation,
} from './executor/operation.js';
export {
  TRANSITIONS,
  RECEIPT_WRITING_STATES,
  RECEIPTED_STATES,
  SETTLED_STATES,
  IN_FLIGHT_STATES,
  canTransition,
  isReceipted,
} from './executor/transitions.js';
export type { OperationEvent, OperationEventType, RetriedRequest } from './executor/events.js';
export type { Effect, EffectType, Acceptance } from './executor/effects.js';

// Client wire adapters, negotiation and connections.
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
  TasksExtWireOptions,
  Rev20251125WireOptions,
  Sep1391WireOptions,
  Aip151WireOptions,
  RpcConnection,
  NotificationListener,
  Era,
} from './executor/adapters/index.js';
export type { ClientInfo } from './executor/adapters/envelope.js';
export type {
  ServerRequest,
  ServerRequestReply,
  ServerRequestHandler,
  ServerRequestHook,
} from './executor/adapters/connection.js';
export type { OpenedStream, StreamRequest } from './executor/adapters/connection.js';
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
  LogLine,
  LogPage,
  LogsAnswer,
  LogsRequest,
  ServerEvent,
  EventPage,
  EventsAnswer,
  EventsRequest,
} from './executor/wire-port.js';
export type { ParamHeader } from './core/param-headers.js';
