import { TerminusError } from '../core/errors.js';
import { isRecord } from '../core/json.js';
import type { LogLine } from '../core/log.js';
import type { TaskStatus } from '../core/task.js';
import type { LogReadQuery, TaskLogPage } from '../runner/engine-port.js';

/**
 * The task-log surface every wire serves with the same JSON (issue 18): the method
 * `terminus/tasks/logs` on the Tasks-extension and 2025-11-25 wires, `GET /v1/operations/{id}/logs`
 * on AIP-151, and the push `notifications/terminus/tasks/logs` on listen channels.
 */
export const LOGS_METHOD = 'terminus/tasks/logs';
export const LOGS_NOTIFICATION = 'notifications/terminus/tasks/logs';

/**
 * The key a Tasks-extension `subscriptions/listen` request sets to `true` in `params.notifications`
 * to get log lines pushed: the extension forbids notification types the client did not ask for.
 */
export const LISTEN_LOGS_KEY = 'terminus/taskLogs';

/** One line as every wire shows it: `at` in ISO 8601. */
export interface WireLogLine {
  readonly seq: number;
  readonly epoch: number;
  readonly at: string;
  readonly stream: LogLine['stream'];
  readonly text: string;
  readonly fields?: Record<string, unknown>;
}

/** The result of `terminus/tasks/logs` and the body of `GET /v1/operations/{id}/logs`. */
export interface WireLogPage {
  readonly taskId: string;
  readonly lines: WireLogLine[];
  readonly next: number;
  readonly dropped: number;
  readonly status: TaskStatus;
  readonly done: boolean;
}

/** A stored line as the wires show it (`at` as ISO 8601). */
export function encodeLogLine(line: LogLine): WireLogLine {
  const base = {
    seq: line.seq,
    epoch: line.epoch,
    at: new Date(line.at).toISOString(),
    stream: line.stream,
    text: line.text,
  };
  return line.fields === undefined ? base : { ...base, fields: { ...line.fields } };
}

/** An engine page as the method result and the AIP body (the contract's shape). */
export function encodeLogPage(page: TaskLogPage): WireLogPage {
  return {
    taskId: page.task.id,
    lines: page.lines.map(encodeLogLine),
    next: page.next,
    dropped: page.dropped,
    status: page.task.status,
    done: page.done,
  };
}

/** `{ after?, limit? }` of the JSON-RPC params: numbers or absent, else `invalid_argument` (the engine checks the ranges). */
export function decodeLogQuery(params: unknown): LogReadQuery {
  const record = isRecord(params) ? params : {};
  return { ...number(record, 'after', AFTER_RULE), ...number(record, 'limit', LIMIT_RULE) };
}

const AFTER_RULE = 'a non-negative integer (a seq from an earlier read, 0 for the start)';
const LIMIT_RULE = 'an integer from 1 to 1000';

function number(record: Record<string, unknown>, key: 'after' | 'limit', rule: string): LogReadQuery {
  const value = record[key];
  if (value === undefined) return {};
  if (typeof value !== 'number') {
    throw new TerminusError('invalid_argument', `${key} must be ${rule}, got ${JSON.stringify(value)}`, {
      details: { field: key },
    });
  }
  return { [key]: value };
}

/** The same from a query string (`?after=&limit=`): digits only, so `-1`, `1.5` and `x` are refused. */
export function decodeLogSearch(search: URLSearchParams): LogReadQuery {
  const read = (key: 'after' | 'limit', rule: string): LogReadQuery => {
    const text = search.get(key);
    if (text === null) return {};
    if (!/^\d{1,15}$/.test(text)) {
      throw new TerminusError('invalid_argument', `${key} must be ${rule}, got ${JSON.stringify(text)}`, {
        details: { field: key },
      });
    }
    return { [key]: Number(text) };
  };
  return { ...read('after', AFTER_RULE), ...read('limit', LIMIT_RULE) };
}
