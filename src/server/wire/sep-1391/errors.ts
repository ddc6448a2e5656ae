import { ProtocolError } from '@modelcontextprotocol/server';
import { isTerminusError } from '../../../core/errors.js';
import { unavailableError } from '../retryable.js';
import { limitExceeded } from '../../limits.js';
import { REASONS, type Reason } from './constants.js';
import type { AsyncStatus } from './encode.js';

/**
 * JSON-RPC errors of SEP-1391, codes as in the reference implementation (reference 2.5; whether the
 * SEP text fixed them is UNCONFIRMED): `-32602` for tokens (unknown, expired, cancelled), `-32600`
 * for a result that is not there yet, `-32603` internal.
 */
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

export function invalidParams(
  message: string,
  reason: Reason = REASONS.invalidParams,
  extra: Record<string, unknown> = {},
): ProtocolError {
  return new ProtocolError(INVALID_PARAMS, message, { reason, ...extra });
}

/** L-13, L-14: unknown, foreign, expired and malformed tokens answer alike (S8). */
export function invalidToken(): ProtocolError {
  return invalidParams('Invalid token', REASONS.invalidToken);
}

/** L-15: any status or result call on a cancelled operation. */
/**
 * A token that names a submission key whose operation expired: it was created, so the answer must
 * not be `invalid_token`, which a client reads as the proof that nothing was created (S6).
 */
export function operationExpired(): ProtocolError {
  return invalidParams('Operation expired: its retention ended', REASONS.operationExpired);
}

export function operationCancelled(): ProtocolError {
  return invalidParams('Operation was cancelled', REASONS.operationCancelled, { status: 'canceled' });
}

/** L-16: `tools/async/result` before `completed`; `data.status` says where it is. */
export function notCompleted(status: AsyncStatus, error?: string): ProtocolError {
  return new ProtocolError(INVALID_REQUEST, `Operation not completed (status: ${status})`, {
    reason: REASONS.notCompleted,
    status,
    ...(error === undefined ? {} : { error }),
  });
}

export function toProtocolError(error: unknown): Error {
  if (error instanceof ProtocolError) return error;
  if (!isTerminusError(error)) return new ProtocolError(INTERNAL_ERROR, 'Internal error');
  switch (error.code) {
    case 'not_found':
      return invalidToken();
    case 'invalid_argument': {
      // The field a refusal names (`webhook`, `cursor`, `limit`) rides along, as on the other wires.
      const field = error.details?.field;
      return invalidParams(
        `Invalid arguments: ${error.message}`,
        REASONS.invalidArguments,
        typeof field === 'string' ? { field } : {},
      );
    }
    case 'submission_key_conflict':
      return invalidParams(
        'operation.token already used for a different call; no operation was created',
        REASONS.tokenConflict,
      );
    case 'submission_key_burned':
      return invalidParams('operation.token was queried before any call used it; use a new token', REASONS.tokenBurned);
    case 'submission_key_too_weak':
      return invalidParams(
        error.message.replace('Submission key', 'operation.token'),
        REASONS.tokenTooWeak,
        error.details ?? {},
      );
    case 'unavailable':
      return unavailableError();
    case 'resource_exhausted':
      return limitExceeded(error);
    case 'wire_disabled':
      return new ProtocolError(INVALID_REQUEST, error.message, { reason: REASONS.wireDisabled });
    default:
      return new ProtocolError(INTERNAL_ERROR, 'Internal error');
  }
}
