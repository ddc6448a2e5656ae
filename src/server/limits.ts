import { ProtocolError } from '@modelcontextprotocol/server';
import type { TerminusError } from '../core/errors.js';

/**
 * The limits of one server (issue 12 items 8, 9; reference T-78, T-79): how much any one caller, and
 * all callers together, may hold or ask for. Defaults are far above what one person's clients use
 * on one machine; `terminus serve` has a flag for each.
 */
export interface ServerLimits {
  /** Concurrently open 2025-11-25 HTTP sessions; one more `initialize` gets 503. 1000. */
  readonly maxSessions: number;
  /**
   * Concurrently open 2025-11-25 HTTP sessions of one caller (principal; every unauthenticated
   * caller is the one principal `anonymous`); one more `initialize` from that caller gets 429, and
   * no other caller is refused for it. 100, or a tenth of `maxSessions` (at least 1) when that is
   * lower, so one caller never holds every session.
   */
  readonly maxSessionsPerCaller: number;
  /** Concurrently open `subscriptions/listen` task streams, all callers. 1024. */
  readonly maxListenStreams: number;
  /** Concurrently open task streams of one caller (principal). 32. */
  readonly maxListenStreamsPerCaller: number;
  /** Tool calls (task creations and inline runs) per caller per minute; 0 turns the limit off. 6000. */
  readonly createsPerMinute: number;
  /** Status, result, list and lookup reads per caller per minute; 0 turns the limit off. 60,000. */
  readonly pollsPerMinute: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxSessions: 1000,
  maxSessionsPerCaller: 100,
  maxListenStreams: 1024,
  maxListenStreamsPerCaller: 32,
  createsPerMinute: 6000,
  pollsPerMinute: 60_000,
};

/**
 * The JSON-RPC error code of every refusal by a limit (rate, streams, sessions, tasks per caller),
 * in the implementation-defined server range (-32000..-32099). `data` is
 * `{ reason, limit, retryAfterMs? }`; over HTTP the answer is also 429 (503 for sessions) with a
 * `Retry-After` header in seconds.
 */
export const LIMIT_EXCEEDED_CODE = -32029;

/** Why a limit refused a request (`data.reason` on the wire). */
export type LimitReason = 'rate_limited' | 'too_many_streams' | 'too_many_sessions' | 'too_many_active_tasks';

/** The options with defaults applied; every value must be a non-negative integer. */
export function resolveLimits(limits: Partial<ServerLimits> = {}): ServerLimits {
  const resolved = {
    ...DEFAULT_LIMITS,
    ...limits,
    maxSessionsPerCaller: limits.maxSessionsPerCaller ?? defaultSessionsPerCaller(limits.maxSessions),
  };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
  return resolved;
}

/** `maxSessionsPerCaller` when not given: 100, or a tenth of `maxSessions` when that is lower. */
export function defaultSessionsPerCaller(maxSessions = DEFAULT_LIMITS.maxSessions): number {
  return Math.min(DEFAULT_LIMITS.maxSessionsPerCaller, Math.max(1, Math.floor(maxSessions / 10)));
}

/** A JSON-RPC error answer for a refusal, as an HTTP response with `Retry-After` (seconds, rounded up). */
export function limitResponse(
  id: unknown,
  status: 429 | 503,
  refusal: {
    readonly reason: LimitReason;
    readonly message: string;
    readonly limit: number;
    readonly retryAfterMs: number;
  },
): Response {
  const body = {
    jsonrpc: '2.0',
    id: id ?? null,
    error: {
      code: LIMIT_EXCEEDED_CODE,
      message: refusal.message,
      data: { reason: refusal.reason, limit: refusal.limit, retryAfterMs: refusal.retryAfterMs },
    },
  };
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      'content-type': 'application/json',
      'retry-after': String(Math.max(1, Math.ceil(refusal.retryAfterMs / 1000))),
    },
  });
}

/** The JSON-RPC error for an engine refusal by a limit (`resource_exhausted`), on every MCP wire. */
export function limitExceeded(error: TerminusError): ProtocolError {
  const details = error.details ?? {};
  return new ProtocolError(LIMIT_EXCEEDED_CODE, error.message, {
    reason: details['reason'],
    limit: details['limit'],
    retryAfterMs: details['retryAfterMs'],
  });
}
