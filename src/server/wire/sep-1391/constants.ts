/**
 * Names of the SEP-1391 wire (`tools/async/*`, reference section 2). SEP-1391 was superseded before
 * it was final; where the reference marks an item UNCONFIRMED the choice made here is documented
 * beside it (and in docs/wires.md, "SEP-1391").
 */

export const STATUS_METHOD = 'tools/async/status';
export const RESULT_METHOD = 'tools/async/result';
/**
 * Our addition: cancel by token. The SEP cancels with `notifications/cancelled` on the original
 * `tools/call` id (L-22), which only works on the connection that sent the call and cannot reach a
 * task created on another wire; this method can.
 */
export const CANCEL_METHOD = 'tools/async/cancel';

/**
 * Our addition (issue 18): a page of the operation's own log by token, `{ token, after?, limit? }`;
 * the result is `terminus/tasks/logs`'s plus the `token`.
 */
export const LOGS_METHOD = 'tools/async/logs';

/**
 * Our addition (issue 32): a page of the operation's ordered events by token, `{ token, cursor?,
 * limit? }`; the result is `terminus/tasks/events`'s plus the `token`. Named by token like every
 * `tools/async/*` method, since a SEP-1391 client may hold only the token (its own submission key).
 */
export const EVENTS_METHOD = 'tools/async/events';

/**
 * L-06 (choice): async support is a feature flag the client declares at `initialize` under
 * `capabilities.experimental`, because the SDK negotiates an unknown protocol version (the reference
 * implementation's `"next"`) down to a released one before any handler sees it.
 */
export const SEP1391_CAPABILITY = 'mcp-terminus.dev/sep-1391';

/** Protocol versions that know `execution.taskSupport` (2025-11-25 tasks); older ones see sync tools only. */
export const TASKS_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25'];

/** `keepAlive` when the call names none, seconds (the reference client's default tracking window). */
export const DEFAULT_KEEP_ALIVE_S = 3600;

/** Longest client token accepted; tokens are opaque, this only bounds storage. */
export const MAX_TOKEN_LENGTH = 256;

/** `data.reason` values on our JSON-RPC errors. */
export const REASONS = {
  invalidParams: 'invalid_params',
  invalidToken: 'invalid_token',
  /** A token whose operation existed and whose retention ended: never "never created" (S6, S7). */
  operationExpired: 'operation_expired',
  operationCancelled: 'operation_cancelled',
  notCompleted: 'operation_not_completed',
  unknownTool: 'unknown_tool',
  invalidArguments: 'invalid_arguments',
  syncTool: 'sync_tool',
  tokenConflict: 'token_conflict',
  tokenBurned: 'token_never_created',
  tokenTooWeak: 'token_too_weak',
  wireDisabled: 'wire_disabled',
} as const;
export type Reason = (typeof REASONS)[keyof typeof REASONS];
