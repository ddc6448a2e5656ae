import type { TaskRecord, TaskStatus, WireName } from '../../core/task.js';
import type { QueryOptions } from '../../sql/pg-db.js';
import { TASK_READ_COLUMNS } from '../columns.js';

/**
 * A task row as `pg` reads it with `rowMode: 'array'`: the values of `TASK_COLUMNS` in order (then
 * any the query adds). Bigint columns arrive as strings (pg does not guess at precision), jsonb
 * parsed, integer and boolean as numbers and booleans. Read as arrays, not objects: pg builds no
 * 28-key object per row (its `addFields` was 7 % of a PostgreSQL `tasks/get` profile).
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

/** Rows as arrays (`toRecord`). */
export const ROWS: QueryOptions = { rowMode: 'array' };

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
  return {
    id: at(v, 'id') as string,
    owner: at(v, 'owner') as string,
    tool: at(v, 'tool') as string,
    args: at(v, 'args') as TaskRecord['args'],
    requestDigest: at(v, 'request_digest') as string,
    submissionKey: at(v, 'submission_key') as string | null,
    wire: at(v, 'wire') as WireName,
    status: at(v, 'status') as TaskStatus,
    statusMessage: at(v, 'status_message') as string | null,
    progress: at(v, 'progress') as TaskRecord['progress'],
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
    checkpoint: at(v, 'checkpoint') ?? null,
    inputRequests: at(v, 'input_requests') as TaskRecord['inputRequests'],
    inputResponses: at(v, 'input_responses') as TaskRecord['inputResponses'],
    result: at(v, 'result') as TaskRecord['result'],
    error: at(v, 'error') as TaskRecord['error'],
    resultDigest: at(v, 'result_digest') as string | null,
    lateOutcome: at(v, 'late_outcome') as TaskRecord['lateOutcome'],
    eventSeq: num(at(v, 'event_seq')),
  };
}
