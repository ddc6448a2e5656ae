import { ProtocolError } from '@modelcontextprotocol/server';
import { isTerminusError } from '../../../core/errors.js';
import { limitExceeded } from '../../limits.js';
import type { TaskStatus } from '../../../core/task.js';
import { unavailableError } from '../retryable.js';
import { REASONS, type Reason } from './constants.js';

/**
 * JSON-RPC errors of the 2025-11-25 tasks wire, made here from `TerminusError` codes (STYLE.md,
 * Errors). Reference 1.14 fixes the codes: `-32602` for ids, cursors and cancel of a terminal task,
 * `-32601` for task-support misuse, `-32603` for internal errors.
 */
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

export function invalidParams(
  message: string,
  reason: Reason = REASONS.invalidParams,
  extra: Record<string, unknown> = {},
): ProtocolError {
  return new ProtocolError(INVALID_PARAMS, message, { reason, ...extra });
}

/** Unknown, foreign, expired and malformed ids all get this, byte for byte (S8, T-68, T-73). */
export function taskNotFoundError(): ProtocolError {
  return invalidParams('Failed to retrieve task: Task not found', REASONS.taskNotFound);
}

/** T-62: the task keeps its status; `data.status` is the status as this wire shows it. */
export function alreadyTerminalError(status: TaskStatus): ProtocolError {
  return invalidParams(`Cannot cancel task in terminal status: ${status}`, REASONS.alreadyTerminal, { status });
}

/** `tasks/result` of a cancelled task: the spec names no payload (reference 5 item 7); ours is this. */
export function taskCancelledError(): ProtocolError {
  return invalidParams('Task was cancelled: it has no result', REASONS.taskCancelled, { status: 'cancelled' });
}

/** T-13: a plain call of a `required` tool. */
export function taskRequiredError(tool: string): ProtocolError {
  return new ProtocolError(
    METHOD_NOT_FOUND,
    `Tool ${tool} requires task augmentation (execution.taskSupport: required)`,
    {
      reason: REASONS.taskRequired,
    },
  );
}

/** T-10: a task-augmented call of a `forbidden` tool. */
export function taskForbiddenError(tool: string): ProtocolError {
  return new ProtocolError(
    METHOD_NOT_FOUND,
    `Tool ${tool} does not support task augmentation (execution.taskSupport: forbidden)`,
    {
      reason: REASONS.taskForbidden,
    },
  );
}

/** T-77: `tasks/list` is neither advertised nor served to a caller we cannot identify. */
export function listNotOfferedError(): ProtocolError {
  return new ProtocolError(METHOD_NOT_FOUND, 'tasks/list is offered only to authenticated callers', {
    reason: REASONS.listNeedsIdentity,
  });
}

/** Maps an engine failure to the JSON-RPC error this wire sends; unknown failures are `-32603` (T-69). */
export function toProtocolError(error: unknown): Error {
  if (error instanceof ProtocolError) return error;
  if (!isTerminusError(error)) return new ProtocolError(INTERNAL_ERROR, 'Internal error');
  switch (error.code) {
    case 'not_found':
      return taskNotFoundError();
    case 'invalid_argument':
      return invalidParams(`Invalid arguments: ${error.message}`, REASONS.invalidArguments);
    case 'submission_key_conflict':
      return invalidParams(
        'Submission key already used for a different request; no task was created',
        REASONS.submissionKeyConflict,
      );
    case 'submission_key_burned':
      return invalidParams(
        'Submission key was looked up before any task used it; submit with a new key',
        REASONS.submissionKeyNeverCreated,
      );
    case 'resource_exhausted':
      return limitExceeded(error);
    case 'wire_disabled':
      return new ProtocolError(INVALID_REQUEST, error.message, { reason: REASONS.wireDisabled });
    case 'unavailable':
      return unavailableError();
    default:
      return new ProtocolError(INTERNAL_ERROR, 'Internal error');
  }
}
