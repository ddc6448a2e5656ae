/** Names the 2025-11-25 experimental tasks wire uses; one place so code, tests and docs agree. */

/** `_meta` key tying a message to its task (reference 1.10). */
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** Page size of `tasks/list`: the 2025 request has no size, so the server picks (T-56). */
export const LIST_PAGE_SIZE = 50;

/**
 * The longest a `tasks/result` waits in one engine call before re-checking for new input requests;
 * the wait itself is unbounded (T-39), this only bounds how stale an undelivered request can get if
 * an event is lost (the engine re-reads the store every 500 ms anyway).
 */
export const RESULT_WAIT_SLICE_MS = 30_000;

/** `data.reason` values on our JSON-RPC errors, so clients branch on data, never on a message. */
export const REASONS = {
  invalidParams: 'invalid_params',
  unknownTool: 'unknown_tool',
  invalidArguments: 'invalid_arguments',
  taskNotFound: 'task_not_found',
  alreadyTerminal: 'already_terminal',
  taskCancelled: 'task_cancelled',
  invalidCursor: 'invalid_cursor',
  taskRequired: 'task_required',
  taskForbidden: 'task_forbidden',
  submissionKeyConflict: 'submission_key_conflict',
  submissionKeyNeverCreated: 'submission_key_never_created',
  wireDisabled: 'wire_disabled',
  listNeedsIdentity: 'list_needs_identity',
} as const;
export type Reason = (typeof REASONS)[keyof typeof REASONS];
