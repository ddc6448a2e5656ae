import type { Database, Statement } from 'better-sqlite3';
import type { TaskRecord, TaskStatus, WireName } from '../../core/task.js';

/** A `tasks` row as better-sqlite3 returns it. */
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
}

/** The statuses a worker may still write; the terminal ones are final (S2). */
export const LIVE = `('working', 'input_required')`;
export const TERMINAL = `('completed', 'failed', 'cancelled')`;

function parse<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

/** JSON for a TEXT column; `undefined` is stored as NULL, as a JSON round trip would drop it. */
export function json(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export function toRecord(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    owner: row.owner,
    tool: row.tool,
    args: JSON.parse(row.args) as TaskRecord['args'],
    requestDigest: row.request_digest,
    submissionKey: row.submission_key,
    wire: row.wire as WireName,
    status: row.status as TaskStatus,
    statusMessage: row.status_message,
    progress: parse(row.progress),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ttlMs: row.ttl_ms,
    pollIntervalMs: row.poll_interval_ms,
    keepAliveMs: row.keep_alive_ms,
    terminalAt: row.terminal_at,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    epoch: row.epoch,
    cancelRequested: row.cancel_requested !== 0,
    checkpoint: parse(row.checkpoint),
    inputRequests: JSON.parse(row.input_requests) as TaskRecord['inputRequests'],
    inputResponses: JSON.parse(row.input_responses) as TaskRecord['inputResponses'],
    result: parse(row.result),
    error: parse(row.error),
    resultDigest: row.result_digest,
    lateOutcome: parse(row.late_outcome),
  };
}

const cache = new WeakMap<Database, Map<string, Statement>>();

/** Prepares `text` once per connection; every SQL literal in this folder goes through here. */
export function statement(db: Database, text: string): Statement {
  let byText = cache.get(db);
  if (byText === undefined) {
    byText = new Map();
    cache.set(db, byText);
  }
  let prepared = byText.get(text);
  if (prepared === undefined) {
    prepared = db.prepare(text);
    byText.set(text, prepared);
  }
  return prepared;
}
