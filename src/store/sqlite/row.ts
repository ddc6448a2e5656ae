import type { Database, Statement } from 'better-sqlite3';
import type { TaskRecord, TaskStatus, WireName } from '../../core/task.js';
import { TASK_READ_COLUMNS } from '../columns.js';
import { parseJsonOrNull, setJsonField } from '../json-fields.js';

/** The columns of a `tasks` row, typed as better-sqlite3 reads them (`toRecord` reads them by position). */
export interface TaskRow {
  id: string;
  owner: string;
  tool: string;
  args: string;
  request_digest: string;
  submission_key: string | null;
  wire: string;
  status: string;
  status_message: string | null;
  progress: string | null;
  created_at: number;
  updated_at: number;
  ttl_ms: number | null;
  poll_interval_ms: number;
  keep_alive_ms: number | null;
  terminal_at: number | null;
  expires_at: number | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  epoch: number;
  cancel_requested: number;
  checkpoint: string | null;
  input_requests: string;
  input_responses: string;
  result: string | null;
  error: string | null;
  result_digest: string | null;
  late_outcome: string | null;
  event_seq: number;
}

/** The statuses a worker may still write; the terminal ones are final (S2). */
export const LIVE = `('working', 'input_required')`;
export const TERMINAL = `('completed', 'failed', 'cancelled')`;

/** JSON for a TEXT column; `undefined` is stored as NULL, as a JSON round trip would drop it. */
export function json(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/**
 * The columns of a task, in `TaskRow`'s order: task statements select them first (`TASK_COLUMNS`)
 * and read each row as an array (`taskStatement`), which `toRecord` maps by position.
 */
const COLUMNS = TASK_READ_COLUMNS satisfies readonly (keyof TaskRow)[];
type Column = (typeof COLUMNS)[number];
const AT = Object.fromEntries(COLUMNS.map((column, i) => [column, i])) as { readonly [C in Column]: number };

/** `SELECT ${TASK_COLUMNS}` / `RETURNING ${TASK_COLUMNS}`: what `toRecord` reads, in its order. */
export const TASK_COLUMNS = COLUMNS.join(', ');

/** A task row read by a `taskStatement`: `TASK_COLUMNS`' values in order, then any the query adds. */
export type TaskValues = readonly unknown[];

/** How many columns a task row has: the columns a query adds after them start at this index. */
export const TASK_COLUMN_COUNT = COLUMNS.length;

function at<C extends Column>(values: TaskValues, column: C): TaskRow[C] {
  return values[AT[column]] as TaskRow[C];
}

export function toRecord(v: TaskValues): TaskRecord {
  const record: TaskRecord = {
    id: at(v, 'id'),
    owner: at(v, 'owner'),
    tool: at(v, 'tool'),
    args: {},
    requestDigest: at(v, 'request_digest'),
    submissionKey: at(v, 'submission_key'),
    wire: at(v, 'wire') as WireName,
    status: at(v, 'status') as TaskStatus,
    statusMessage: at(v, 'status_message'),
    progress: parseJsonOrNull(at(v, 'progress')),
    createdAt: at(v, 'created_at'),
    updatedAt: at(v, 'updated_at'),
    ttlMs: at(v, 'ttl_ms'),
    pollIntervalMs: at(v, 'poll_interval_ms'),
    keepAliveMs: at(v, 'keep_alive_ms'),
    terminalAt: at(v, 'terminal_at'),
    leaseOwner: at(v, 'lease_owner'),
    leaseExpiresAt: at(v, 'lease_expires_at'),
    epoch: at(v, 'epoch'),
    cancelRequested: at(v, 'cancel_requested') !== 0,
    checkpoint: null,
    inputRequests: JSON.parse(at(v, 'input_requests')) as TaskRecord['inputRequests'],
    inputResponses: JSON.parse(at(v, 'input_responses')) as TaskRecord['inputResponses'],
    result: null,
    error: parseJsonOrNull(at(v, 'error')),
    resultDigest: at(v, 'result_digest'),
    lateOutcome: parseJsonOrNull(at(v, 'late_outcome')),
    eventSeq: at(v, 'event_seq'),
  };
  setJsonField(record, 'args', at(v, 'args'), record.id);
  setJsonField(record, 'checkpoint', at(v, 'checkpoint'), record.id);
  setJsonField(record, 'result', at(v, 'result'), record.id);
  return record;
}

const cache = new WeakMap<Database, Map<string, Statement>>();

/** Prepares `text` once per connection; every SQL literal in this folder goes through here. */
export function statement(db: Database, text: string, raw = false): Statement {
  let byText = cache.get(db);
  if (byText === undefined) {
    byText = new Map();
    cache.set(db, byText);
  }
  let prepared = byText.get(text);
  if (prepared === undefined) {
    prepared = raw ? db.prepare(text).raw(true) : db.prepare(text);
    byText.set(text, prepared);
  }
  return prepared;
}

/**
 * A statement that selects or returns `TASK_COLUMNS` first, its rows read as arrays (`toRecord`):
 * better-sqlite3 builds an object of 28 keys per row otherwise, which cost a `tasks/get` 9 us
 * against 5.5 us (docs/benchmarks.md, figure 8). A text is always prepared one way or the other.
 */
export function taskStatement(db: Database, text: string): Statement {
  return statement(db, text, true);
}
