import { TerminusError } from '../core/errors.js';
import { encodeEventCursor } from '../core/event-cursor.js';
import { isRecord } from '../core/json.js';
import type { OrderedEvent } from '../core/task-events.js';
import type { TaskRecord, TaskStatus } from '../core/task.js';
import type { EventReadQuery, TaskEventPage } from '../runner/engine-port.js';
import { encodeLogLine, type WireLogLine } from './task-logs.js';

/**
 * A task's ordered events (issue 32) with the same JSON on every wire that serves them: the method
 * `terminus/tasks/events` on the Tasks-extension and 2025-11-25 wires, and
 * `GET /v1/operations/{id}/events?cursor=&limit=` on AIP-151. The last seq and its cursor ride on
 * every `tasks/get` answer and status notification under `_meta["mcp-terminus.dev/events"]`, so a
 * client that lost its stream reads on from the cursor it holds and sees each event once.
 */
export const EVENTS_METHOD = 'terminus/tasks/events';

/** The vendor `_meta` key: `{ lastSeq, cursor }` of the task as read (prefix as our other keys). */
export const EVENTS_META = 'mcp-terminus.dev/events';

/** One event as every wire shows it: `at` in ISO 8601, a log event with its line (null once dropped). */
export type WireEvent = { readonly seq: number; readonly at: string } & (
  | {
      readonly kind: 'status';
      readonly status: TaskStatus;
      readonly statusMessage: string | null;
      /** On `completed`: `digestOf` the result, as a client digests what it fetches (C13). */
      readonly resultDigest?: string;
    }
  | { readonly kind: 'progress'; readonly progress: { done: number; total?: number; message?: string } }
  | { readonly kind: 'input_requested'; readonly key: string; readonly request: Record<string, unknown> }
  | { readonly kind: 'input_answered'; readonly keys: readonly string[] }
  | {
      readonly kind: 'log';
      readonly logSeq: number;
      readonly stream: 'log' | 'output';
      readonly line: WireLogLine | null;
    }
);

/** The result of `terminus/tasks/events` and the body of `GET /v1/operations/{id}/events`. */
export interface WireEventPage {
  readonly taskId: string;
  readonly events: WireEvent[];
  /** Pass as `cursor` to read on. */
  readonly cursor: string;
  readonly lastSeq: number;
  /** Seqs passed over since the cursor read from: progress and log events the per-task bound dropped. */
  readonly skipped: number;
  readonly status: TaskStatus;
  /** The interval the task suggests between reads (as its status read would), absent when it has none. */
  readonly pollIntervalMs?: number;
  readonly done: boolean;
}

export function encodeEvent(event: OrderedEvent): WireEvent {
  const at = new Date(event.at).toISOString();
  if (event.kind === 'log') {
    const line = event.line === null ? null : encodeLogLine(event.line);
    return { seq: event.seq, at, kind: 'log', logSeq: event.logSeq, stream: event.stream, line };
  }
  return { ...event, at } as WireEvent;
}

/**
 * The page as a wire shows it. `project` is the wire's own word for a terminal task's status where
 * it differs from the core's (2025-11-25 calls a tool's `isError: true` result `failed`): the page
 * and its `completed` event then say that status, without the digest of a result the wire does not
 * hand over as one, so the status a client reads here is the one its status read would give.
 */
export function encodeEventPage(page: TaskEventPage, project?: (task: TaskRecord) => TaskStatus): WireEventPage {
  const status = project?.(page.task) ?? page.task.status;
  const events = page.events.map(encodeEvent);
  return {
    taskId: page.task.id,
    events:
      status === page.task.status
        ? events
        : events.map((e) => (e.kind === 'status' && e.status === page.task.status ? withStatus(e, status) : e)),
    cursor: page.cursor,
    lastSeq: page.lastSeq,
    skipped: page.skipped,
    status,
    ...(Number.isFinite(page.task.pollIntervalMs) && page.task.pollIntervalMs >= 1
      ? { pollIntervalMs: Math.round(page.task.pollIntervalMs) }
      : {}),
    done: page.done,
  };
}

function withStatus(event: WireEvent & { kind: 'status' }, status: TaskStatus): WireEvent {
  const { resultDigest: _digest, ...rest } = event;
  return { ...rest, status };
}

/** `_meta` of a task as read: where its events stand. */
export function eventsMeta(task: TaskRecord): Record<string, unknown> {
  return { [EVENTS_META]: { lastSeq: task.eventSeq, cursor: encodeEventCursor(task.id, task.eventSeq) } };
}

const CURSOR_RULE = 'a string: the cursor of an earlier events read or of _meta';
const LIMIT_RULE = 'an integer from 1 to 1000';

/** `{ cursor?, limit? }` of the JSON-RPC params: the types here, the values by the engine. */
export function decodeEventQuery(params: unknown): EventReadQuery {
  const record = isRecord(params) ? params : {};
  const { cursor, limit } = record;
  if (cursor !== undefined && typeof cursor !== 'string') throw wrongType('cursor', CURSOR_RULE, cursor);
  if (limit !== undefined && typeof limit !== 'number') throw wrongType('limit', LIMIT_RULE, limit);
  return { ...(cursor === undefined ? {} : { cursor }), ...(limit === undefined ? {} : { limit }) };
}

/** The same from a query string (`?cursor=&limit=`); `limit` digits only. */
export function decodeEventSearch(search: URLSearchParams): EventReadQuery {
  const cursor = search.get('cursor');
  const limit = search.get('limit');
  if (limit !== null && !/^\d{1,15}$/.test(limit)) throw wrongType('limit', LIMIT_RULE, limit);
  return {
    ...(cursor === null || cursor === '' ? {} : { cursor }),
    ...(limit === null ? {} : { limit: Number(limit) }),
  };
}

function wrongType(field: string, rule: string, value: unknown): TerminusError {
  // Quoted cut short: a caller may send a megabyte of nested objects where a cursor goes.
  const text = JSON.stringify(value) ?? String(value);
  const got = text.length > 40 ? `${text.slice(0, 40)}...` : text;
  return new TerminusError('invalid_argument', `${field} must be ${rule}, got ${got}`, {
    details: { field },
  });
}
