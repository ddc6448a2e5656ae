import type { TaskRecord, TaskStatus, WireName } from '../../core/task.js';

/**
 * A `tasks` row as `pg` returns it: bigint columns arrive as strings (pg does not guess at
 * precision), jsonb arrives parsed, integer and boolean as numbers and booleans.
 */
export interface TaskRow {
  id: string;
  owner: string;
  tool: string;
  args: Record<string, unknown>;
  request_digest: string;
  submission_key: string | null;
  wire: string;
  status: string;
  status_message: string | null;
  progress: TaskRecord['progress'];
  created_at: string;
  updated_at: string;
  ttl_ms: string | null;
  poll_interval_ms: string;
  keep_alive_ms: string | null;
  terminal_at: string | null;
  expires_at: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  epoch: number;
  cancel_requested: boolean;
  checkpoint: unknown;
  input_requests: TaskRecord['inputRequests'];
  input_responses: TaskRecord['inputResponses'];
  result: Record<string, unknown> | null;
  error: TaskRecord['error'];
  result_digest: string | null;
  late_outcome: TaskRecord['lateOutcome'];
  /** bigint: a string. */
  event_seq: string;
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

function num(value: string): number {
  return Number(value);
}

function numOrNull(value: string | null): number | null {
  return value === null ? null : Number(value);
}

export function toRecord(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    owner: row.owner,
    tool: row.tool,
    args: row.args,
    requestDigest: row.request_digest,
    submissionKey: row.submission_key,
    wire: row.wire as WireName,
    status: row.status as TaskStatus,
    statusMessage: row.status_message,
    progress: row.progress,
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
    ttlMs: numOrNull(row.ttl_ms),
    pollIntervalMs: num(row.poll_interval_ms),
    keepAliveMs: numOrNull(row.keep_alive_ms),
    terminalAt: numOrNull(row.terminal_at),
    leaseOwner: row.lease_owner,
    leaseExpiresAt: numOrNull(row.lease_expires_at),
    epoch: row.epoch,
    cancelRequested: row.cancel_requested,
    checkpoint: row.checkpoint ?? null,
    inputRequests: row.input_requests,
    inputResponses: row.input_responses,
    result: row.result,
    error: row.error,
    resultDigest: row.result_digest,
    lateOutcome: row.late_outcome,
    eventSeq: num(row.event_seq),
  };
}
