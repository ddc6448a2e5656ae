/**
 * Task logs on the client side (issue 18): the one JSON object every wire answers (`terminus/tasks/logs`
 * on both MCP wires, `GET /v1/operations/{id}/logs` on AIP-151), decoded into the port's `LogPage`,
 * and the JSON-RPC call with its error mapping. Malformed pages are `malformed` (read again, never
 * shown half); `-32601` is `unsupported` (a server that keeps no logs), `-32602` is `not_found`.
 */
import type { LogLine, LogPage, LogsAnswer, LogsRequest, RpcChannel } from '../wire-port.js';
import { WireFailure } from '../wire-port.js';
import { isRecord, isRpcError, malformed, RPC_CODES } from './rpc-error.js';
import { isWireStatus } from './snapshot.js';

/** Our JSON-RPC method for a task's log (server: `src/server/task-logs.ts`). */
export const LOGS_METHOD = 'terminus/tasks/logs';
/** What a server pushes to listeners when lines are appended (a hint: the cursor read is the truth). */
export const LOGS_NOTIFICATION = 'notifications/terminus/tasks/logs';
/**
 * The key a Tasks-extension `subscriptions/listen` sets to `true` in `params.notifications` to get
 * `LOGS_NOTIFICATION` on the stream: the server sends no notification type the client did not ask
 * for. Our server echoes it in the acknowledgement (`src/server/task-logs.ts`).
 */
export const LISTEN_LOGS_KEY = 'terminus/taskLogs';

const count = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0;

function decodeLine(raw: unknown): LogLine {
  if (!isRecord(raw)) throw malformed('log line is not an object');
  const { seq, epoch, at, stream, text, fields } = raw;
  if (!count(seq) || seq < 1) throw malformed('log line without a positive seq');
  if (!count(epoch)) throw malformed(`log line ${seq} without an epoch`);
  if (typeof at !== 'string') throw malformed(`log line ${seq} without a time`);
  if (stream !== 'log' && stream !== 'output') throw malformed(`log line ${seq} has stream ${String(stream)}`);
  if (typeof text !== 'string') throw malformed(`log line ${seq} without text`);
  if (fields !== undefined && !isRecord(fields)) throw malformed(`log line ${seq}: fields is not an object`);
  return { seq, epoch, at, stream, text, ...(fields === undefined ? {} : { fields: { ...fields } }) };
}

/**
 * The page, checked: lines in increasing `seq` after the cursor asked for, `next` at or past the last
 * one. A page that breaks either would make a follower repeat or skip lines, so it is `malformed`.
 */
export function decodeLogPage(raw: unknown, taskId: string, after: number): LogPage {
  if (!isRecord(raw)) throw malformed('logs answer is not an object');
  if (raw.taskId !== taskId) throw malformed(`logs answer is about ${String(raw.taskId)}, not ${taskId}`);
  if (!Array.isArray(raw.lines)) throw malformed('logs answer without lines');
  const { next, dropped, status, done } = raw;
  if (!count(next) || !count(dropped)) throw malformed('logs answer without next and dropped counts');
  if (!isWireStatus(status)) throw malformed(`logs answer with status ${String(status)}`);
  if (typeof done !== 'boolean') throw malformed('logs answer without done');
  const lines = raw.lines.map(decodeLine);
  let last = after;
  for (const line of lines) {
    if (line.seq <= last) throw malformed(`log line ${line.seq} is not after ${last}`);
    last = line.seq;
  }
  if (next < last) throw malformed(`logs cursor ${next} is before its last line ${last}`);
  return { taskId, lines, next, dropped, status, done };
}

/** The query of a logs request: `after` defaults to 0, `limit` is sent only when given. */
export function logsParams(taskId: string, request: LogsRequest): Record<string, unknown> {
  return {
    taskId,
    after: request.after ?? 0,
    ...(request.limit === undefined ? {} : { limit: request.limit }),
  };
}

/** `terminus/tasks/logs` over a JSON-RPC channel (either MCP wire). */
export async function rpcLogs(
  channel: RpcChannel,
  taskId: string,
  request: LogsRequest,
  signal?: AbortSignal,
): Promise<LogsAnswer> {
  try {
    const raw = await channel(LOGS_METHOD, logsParams(taskId, request), { signal });
    return { kind: 'page', ...decodeLogPage(raw, taskId, request.after ?? 0) };
  } catch (error) {
    if (isRpcError(error, RPC_CODES.methodNotFound)) return { kind: 'unsupported' };
    if (isRpcError(error, RPC_CODES.invalidParams)) {
      throw new WireFailure('not_found', error.message, { rpcCode: error.rpcCode, cause: error });
    }
    throw error;
  }
}
