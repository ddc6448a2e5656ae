import { isTerminusError } from '../../../core/errors.js';
import { UNAVAILABLE_RETRY_AFTER_MS } from '../retryable.js';
import { ERROR_DOMAIN, ERROR_INFO_TYPE, RPC_CODES, type RpcCodeName } from './constants.js';

/**
 * HTTP errors of the AIP-151 wire in the AIP-193 JSON shape:
 * `{ "error": { "code": <http>, "message", "status": "<CODE_NAME>", "details": [ErrorInfo] } }`.
 * Made here from `TerminusError` codes only (STYLE.md, Errors).
 */
export class AipError extends Error {
  readonly status: RpcCodeName;
  readonly reason: string;

  constructor(status: RpcCodeName, reason: string, message: string) {
    super(message);
    this.name = 'AipError';
    this.status = status;
    this.reason = reason;
  }

  toResponse(): Response {
    const { http } = RPC_CODES[this.status];
    const body = {
      error: {
        code: http,
        message: this.message,
        status: this.status,
        details: [{ '@type': ERROR_INFO_TYPE, reason: this.reason.toUpperCase(), domain: ERROR_DOMAIN }],
      },
    };
    const retry: Record<string, string> =
      this.status === 'UNAVAILABLE' ? { 'retry-after': String(Math.ceil(UNAVAILABLE_RETRY_AFTER_MS / 1000)) } : {};
    return new Response(JSON.stringify(body), {
      status: http,
      headers: { 'content-type': 'application/json', ...retry },
    });
  }
}

/** Unknown, foreign, expired and malformed names answer alike (S8). */
export function operationNotFound(): AipError {
  return new AipError('NOT_FOUND', 'operation_not_found', 'Operation not found');
}

export function invalidArgument(message: string, reason = 'invalid_argument'): AipError {
  return new AipError('INVALID_ARGUMENT', reason, message);
}

/** Maps an engine failure to the HTTP error; anything unknown is INTERNAL without details. */
export function toAipError(error: unknown): AipError {
  if (error instanceof AipError) return error;
  if (!isTerminusError(error)) return new AipError('INTERNAL', 'internal', 'Internal error');
  switch (error.code) {
    case 'not_found':
      return operationNotFound();
    case 'invalid_argument':
      return invalidArgument(error.message);
    case 'submission_key_conflict':
      return new AipError(
        'ALREADY_EXISTS',
        'request_id_conflict',
        'requestId already used for a different request (another tool or other arguments); no operation was created',
      );
    case 'submission_key_burned':
      return new AipError(
        'FAILED_PRECONDITION',
        'request_id_never_created',
        'requestId was looked up before any operation used it; submit with a new requestId',
      );
    case 'submission_key_too_weak':
      return invalidArgument(error.message.replace('Submission key', 'requestId'), 'request_id_too_weak');
    case 'resource_exhausted': {
      const reason = error.details?.['reason'];
      return new AipError(
        'RESOURCE_EXHAUSTED',
        typeof reason === 'string' ? reason : 'resource_exhausted',
        error.message,
      );
    }
    case 'wire_disabled':
      return new AipError('FAILED_PRECONDITION', 'wire_disabled', error.message);
    case 'unavailable':
      return new AipError('UNAVAILABLE', 'unavailable', 'Service unavailable, retry later');
    default:
      return new AipError('INTERNAL', 'internal', 'Internal error');
  }
}

/** JSON-RPC error code of a failed task -> `google.rpc.Code` number for `Operation.error.code`. */
export function rpcCodeOfJsonRpc(code: number): number {
  if (code === -32602 || code === -32600) return RPC_CODES.INVALID_ARGUMENT.code;
  if (code === -32601) return RPC_CODES.UNIMPLEMENTED.code;
  if (code === -32603) return RPC_CODES.INTERNAL.code;
  return RPC_CODES.UNKNOWN.code;
}
