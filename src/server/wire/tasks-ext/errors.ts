import { MissingRequiredClientCapabilityError, ProtocolError } from '@modelcontextprotocol/server';
import { isTerminusError } from '../../../core/errors.js';
import { unavailableError } from '../retryable.js';
import { limitExceeded } from '../../limits.js';
import { INVALID_PARAMS_REASONS, TASKS_EXTENSION, type InvalidParamsReason } from './constants.js';

/**
 * JSON-RPC errors of this wire. The engine speaks `TerminusError` codes; they become JSON-RPC codes
 * here, at the edge, and nowhere else (STYLE.md, Errors).
 */
const INVALID_PARAMS = -32602;
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;

/** A `-32602` with a machine-readable `data.reason`. */
export function invalidParams(
  message: string,
  reason: InvalidParamsReason = INVALID_PARAMS_REASONS.invalidParams,
  extra: Record<string, unknown> = {},
): ProtocolError {
  return new ProtocolError(INVALID_PARAMS, message, { reason, ...extra });
}

/**
 * The one answer for unknown, foreign, expired and malformed task ids (S8, X-44, X-45): same code,
 * same message, same data, so an id cannot be probed for existence or ownership.
 */
export function taskNotFoundError(): ProtocolError {
  return invalidParams('Failed to retrieve task: Task not found', INVALID_PARAMS_REASONS.taskNotFound);
}

/** `-32021` naming the Tasks extension as the missing capability. */
export function tasksCapabilityRequired(message: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    message,
  );
}

/** Maps an engine failure to the JSON-RPC error the client sees; unknown failures are `-32603`. */
export function toProtocolError(error: unknown): Error {
  if (error instanceof ProtocolError) return error;
  if (!isTerminusError(error)) {
    return new ProtocolError(INTERNAL_ERROR, 'Internal error');
  }
  switch (error.code) {
    case 'not_found':
      return taskNotFoundError();
    case 'invalid_argument':
      return invalidParams(`Invalid arguments: ${error.message}`, INVALID_PARAMS_REASONS.invalidArguments);
    case 'submission_key_conflict':
      return invalidParams(
        'Submission key already used for a different request (another tool or other arguments); ' +
          'no task was created for this one',
        INVALID_PARAMS_REASONS.submissionKeyConflict,
      );
    case 'submission_key_burned':
      return invalidParams(
        'Submission key was looked up before any task used it, so that task was never created and never ' +
          'will be; submit with a new key',
        INVALID_PARAMS_REASONS.submissionKeyNeverCreated,
      );
    case 'submission_key_too_weak':
      return invalidParams(error.message, INVALID_PARAMS_REASONS.submissionKeyTooWeak, error.details ?? {});
    case 'capability_required':
      return tasksCapabilityRequired(error.message);
    case 'resource_exhausted':
      return limitExceeded(error);
    case 'wire_disabled':
      return new ProtocolError(INVALID_REQUEST, error.message, { reason: 'wire_disabled' });
    case 'unavailable':
      return unavailableError();
    default:
      return new ProtocolError(INTERNAL_ERROR, 'Internal error');
  }
}
