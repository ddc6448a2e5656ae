import type { TaskRecord, TaskStatus, WireName } from '../../core/task.js';
import type { QueryOptions } from '../../sql/pg-db.js';
import pg from 'pg';
import { TASK_READ_COLUMNS } from '../columns.js';
import { parseJsonOrNull, setJsonField } from '../json-fields.js';

/**
 * A task row as `pg` reads it with `rowMode: 'array'`: the values of `TASK_COLUMNS` in order (then
 * any the query adds). Bigint columns arrive as strings (pg does not guess at precision), jsonb
 * as its text (`ROWS`), integer and boolean as numbers and booleans. Read as arrays, not objects:
 * pg builds no 28-key object per row (its `addFields` was 7 % of a PostgreSQL `tasks/get` profile).
 */
export type TaskValues = readonly unknown[];

/** Every statement names its columns (never `*`): statements are prepared, see `DbOptions.prepared`. */
export const TASK_COLUMNS = TASK_READ_COLUMNS.join(', ');

/** `TASK_COLUMNS` qualified by a table alias, for joins. */
export function taskColumnsOf(alias: string): string {
  return TASK_READ_COLUMNS.map((column) => `${alias}.${column}`).join(', ');
}

/** Where the columns a query adds after the task's start. */
export const TASK_COLUMN_COUNT = TASK_READ_COLUMNS.length;

/**
 * Task rows as arrays (`toRecord`), their json and jsonb columns as the text PostgreSQL sent:
 * `toRecord` parses them, the large values of `setJsonField` only when first read. Every column a
 * task statement adds after the task's is text or a number.
 */
export const ROWS: QueryOptions = { rowMode: 'array', types: { getTypeParser: rawJson } };

const JSON_OIDS = new Set([114, 3802]); // json, jsonb

function rawJson(oid: number, format?: string): (text: string) => unknown {
  return JSON_OIDS.has(oid)
    ? (text) => text
    : (pg.types.getTypeParser(oid, format as 'text') as (text: string) => unknown);
}

/** The statuses a worker may still write; the terminal ones are final (S2). */
export const LIVE = `('working', 'input_required')`;
export const TERMINAL = `('completed', 'failed', 'cancelled')`;

/**
 * A jsonb parameter. Always stringified by us: `pg` would turn a JS array into a PostgreSQL array
 * literal. `undefined` becomes NULL, as a JSON round trip would drop it.
 */
export function json(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

type Column = (typeof TASK_READ_COLUMNS)[number];
const AT = Object.fromEntries(TASK_READ_COLUMNS.map((column, i) => [column, i])) as {
  readonly [C in Column]: number;
};

function at(v: TaskValues, column: Column): unknown {
  return v[AT[column]];
}

function num(value: unknown): number {
  return Number(value);
}

function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

export function toRecord(v: TaskValues): TaskRecord {
  const record: TaskRecord = {
    id: at(v, 'id') as string,
    owner: at(v, 'owner') as string,
    tool: at(v, 'tool') as string,
    args: {},
    requestDigest: at(v, 'request_digest') as string,
    submissionKey: at(v, 'submission_key') as string | null,
    wire: at(v, 'wire') as WireName,
    status: at(v, 'status') as TaskStatus,
    statusMessage: at(v, 'status_message') as string | null,
    progress: parseJsonOrNull<TaskRecord['progress']>(at(v, 'progress') as string | null),
    createdAt: num(at(v, 'created_at')),
    updatedAt: num(at(v, 'updated_at')),
    ttlMs: numOrNull(at(v, 'ttl_ms')),
    pollIntervalMs: num(at(v, 'poll_interval_ms')),
    keepAliveMs: numOrNull(at(v, 'keep_alive_ms')),
    terminalAt: numOrNull(at(v, 'terminal_at')),
    leaseOwner: at(v, 'lease_owner') as string | null,
    leaseExpiresAt: numOrNull(at(v, 'lease_expires_at')),
    epoch: at(v, 'epoch') as number,
    cancelRequested: at(v, 'cancel_requested') as boolean,
    checkpoint: null,
    inputRequests: JSON.parse(at(v, 'input_requests') as string) as TaskRecord['inputRequests'],
    inputResponses: JSON.parse(at(v, 'input_responses') as string) as TaskRecord['inputResponses'],
    result: null,
    error: parseJsonOrNull<TaskRecord['error']>(at(v, 'error') as string | null),
    resultDigest: at(v, 'result_digest') as string | null,
    lateOutcome: parseJsonOrNull<TaskRecord['lateOutcome']>(at(v, 'late_outcome') as string | null),
    eventSeq: num(at(v, 'event_seq')),
  };
  setJsonField(record, 'args', at(v, 'args') as string, record.id);
  setJsonField(record, 'checkpoint', at(v, 'checkpoint') as string | null, record.id);
  setJsonField(record, 'result', at(v, 'result') as string | null, record.id);
  return record;
}
