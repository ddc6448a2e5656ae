/** Names the 2026-07-28 Tasks extension wire uses; one place so tests and docs quote the same strings. */

/** The extension key in `capabilities.extensions` (server) and the per-request client capabilities. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * Where a client puts its idempotency key: `params._meta["mcp-terminus.dev/submissionKey"]` of a
 * `tools/call`. Same key + same request digest returns the existing task (S5).
 */
export const SUBMISSION_KEY_META = 'mcp-terminus.dev/submissionKey';

/**
 * Where a client names a webhook for its call (issue 32): `params._meta["mcp-terminus.dev/webhook"]
 * = { url, secret, events? }` of a `tools/call` that makes a task.
 */
export const WEBHOOK_META = 'mcp-terminus.dev/webhook';

/** Our own method: find a task by submission key; burns an unused key (S6). */
export const LOOKUP_METHOD = 'terminus/tasks/lookup';

/** `_meta` key on `tasks/get` carrying the last durable progress of a working task. */
export const PROGRESS_META = 'mcp-terminus.dev/progress';

/** `_meta` key on a `CreateTaskResult` saying whether this call created the task (false = deduplicated). */
export const SUBMISSION_META = 'mcp-terminus.dev/submission';

/** The 2025-11-25 key that must not appear on an inlined 2026 result. */
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** Longest submission key accepted; keys are opaque, this only bounds storage. */
export const MAX_SUBMISSION_KEY_LENGTH = 256;

/**
 * `data.reason` values on our `-32602` errors, so a client branches on data, never on a message.
 */
export const INVALID_PARAMS_REASONS = {
  invalidParams: 'invalid_params',
  unknownTool: 'unknown_tool',
  invalidArguments: 'invalid_arguments',
  taskNotFound: 'task_not_found',
  submissionKeyConflict: 'submission_key_conflict',
  submissionKeyNeverCreated: 'submission_key_never_created',
  submissionKeyNeedsTask: 'submission_key_needs_task',
  submissionKeyTooWeak: 'submission_key_too_weak',
} as const;
export type InvalidParamsReason = (typeof INVALID_PARAMS_REASONS)[keyof typeof INVALID_PARAMS_REASONS];
