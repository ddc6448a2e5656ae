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
export type {
  NewTask,
  CreateOutcome,
  KeyLookup,
  ListQuery,
  TaskPage,
  CancelOutcome,
  ClaimRequest,
  Fence,
  FinishInput,
  FinishOutcome,
} from './store/port.js';
export { createMemoryTaskStore } from './store/memory/index.js';
export { createEngine } from './runner/engine.js';
export type { EngineOptions } from './runner/engine.js';
