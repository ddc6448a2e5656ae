import { encodeEventCursor } from '../../../core/event-cursor.js';
import { expiresAt, isTerminal, type TaskRecord, type TaskStatus } from '../../../core/task.js';
import { JSONRPC_ERROR_TYPE, METADATA_TYPE, OPERATION_PREFIX, RESPONSE_TYPE, RPC_CODES } from './constants.js';
import { rpcCodeOfJsonRpc } from './errors.js';

/**
 * Encoding: `TaskRecord` -> `google.longrunning.Operation` JSON (reference 3.1). Pure.
 * `done=false` carries neither `error` nor `response`; `done=true` exactly one (G-20). A cancelled
 * task ends with `error.code = 1` CANCELLED (G-24). Statuses, times, progress and the poll hint live
 * in `metadata` (the Operation has no fields for them).
 */

export interface RpcStatusJson {
  code: number;
  message: string;
  details?: Record<string, unknown>[];
}

export interface TaskMetadataJson {
  '@type': string;
  tool: string;
  status: TaskStatus;
  statusMessage?: string;
  progress?: { done: number; total?: number; message?: string };
  createTime: string;
  updateTime: string;
  endTime?: string;
  /** The wire the task was created under. */
  wire: string;
  /** Suggested gap between `GetOperation` polls, a Duration (G-28). */
  pollInterval: string;
  /** Retention horizon, when known (G-15). */
  expireTime?: string;
  /** Where the task's ordered events stand (issue 32): read on with `GET .../events?cursor=`. */
  events: { lastSeq: number; cursor: string };
}

export interface OperationJson {
  name: string;
  metadata: TaskMetadataJson;
  done: boolean;
  error?: RpcStatusJson;
  response?: Record<string, unknown>;
}

export function operationName(id: string): string {
  return `${OPERATION_PREFIX}${id}`;
}

function duration(ms: number): string {
  return `${(ms / 1000).toFixed(3).replace(/\.?0+$/, '')}s`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function encodeMetadata(task: TaskRecord): TaskMetadataJson {
  const metadata: TaskMetadataJson = {
    '@type': METADATA_TYPE,
    tool: task.tool,
    status: task.status,
    createTime: iso(task.createdAt),
    updateTime: iso(task.updatedAt),
    wire: task.wire,
    pollInterval: duration(task.pollIntervalMs),
    events: { lastSeq: task.eventSeq, cursor: encodeEventCursor(task.id, task.eventSeq) },
  };
  if (task.statusMessage !== null && task.statusMessage !== '') metadata.statusMessage = task.statusMessage;
  if (task.progress !== null) metadata.progress = { ...task.progress };
  if (task.terminalAt !== null) metadata.endTime = iso(task.terminalAt);
  const expires = expiresAt(task);
  if (expires !== null) metadata.expireTime = iso(expires);
  return metadata;
}

export function encodeOperation(task: TaskRecord): OperationJson {
  const operation: OperationJson = {
    name: operationName(task.id),
    metadata: encodeMetadata(task),
    done: isTerminal(task.status),
  };
  if (task.status === 'completed') {
    // The tool's own `isError: true` result is a successful call on MCP's terms: it stays a response.
    operation.response = { '@type': RESPONSE_TYPE, ...(task.result ?? { content: [] }) };
  } else if (task.status === 'cancelled') {
    operation.error = { code: RPC_CODES.CANCELLED.code, message: task.statusMessage ?? 'Operation was cancelled' };
  } else if (task.status === 'failed') {
    const error = task.error ?? { code: -32603, message: task.statusMessage ?? 'Operation failed' };
    operation.error = {
      code: rpcCodeOfJsonRpc(error.code),
      message: error.message,
      details: [
        {
          '@type': JSONRPC_ERROR_TYPE,
          code: error.code,
          message: error.message,
          ...(error.data === undefined ? {} : { data: error.data }),
        },
      ],
    };
  }
  return operation;
}

export function encodeListOperations(tasks: readonly TaskRecord[], nextCursor: string | null): Record<string, unknown> {
  return { operations: tasks.map(encodeOperation), nextPageToken: nextCursor ?? '' };
}
