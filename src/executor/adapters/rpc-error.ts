/**
 * The one `WireFailure` shape a channel uses for a JSON-RPC error answer. The channel cannot know
 * what a code means for a given method (`-32602` is "not found" on `tasks/get` but "bad arguments"
 * on `tools/call`), so it reports every error answer as `rejected` with its code and data, and the
 * wire adapter, which knows the method, maps it (STYLE.md: callers branch on codes, never messages).
 */
import { WireFailure } from '../wire-port.js';
import { isRecord } from '../../core/json.js';
export { isRecord };

export const RPC_CODES = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  missingClientCapability: -32021,
} as const;

/**
 * A JSON-RPC error answer: `kind` is `rejected`, `rpcCode` the code, `rpcData` the `data` member.
 *
 * @example
 * ```ts
 * try {
 *   await connection.request('tasks/get', { taskId });
 * } catch (error) {
 *   if (error instanceof RpcErrorFailure && error.rpcCode === -32602) console.log('unknown task', error.reason);
 * }
 * ```
 */
export class RpcErrorFailure extends WireFailure {
  readonly rpcData: unknown;

  constructor(code: number, message: string, data: unknown, options: { httpStatus?: number } = {}) {
    super('rejected', message, { rpcCode: code, ...options });
    this.name = 'RpcErrorFailure';
    this.rpcData = data;
  }

  /** `data.reason`, the machine-readable reason our server (and some others) attach. */
  get reason(): string | undefined {
    const data = this.rpcData;
    if (typeof data !== 'object' || data === null) return undefined;
    const reason = (data as Record<string, unknown>).reason;
    return typeof reason === 'string' ? reason : undefined;
  }
}

export function isRpcError(error: unknown, code?: number): error is RpcErrorFailure {
  return error instanceof RpcErrorFailure && (code === undefined || error.rpcCode === code);
}

/** The answer could not be read as the method's result: retry the read, never accept it. */
export function malformed(message: string, cause?: unknown): WireFailure {
  return new WireFailure('malformed', message, cause === undefined ? {} : { cause });
}

/**
 * A 401/403: the credentials were refused, whatever the body says (a JSON-RPC error, a
 * `google.rpc.Status`, a proxy's page). Its message, when there is one, is kept for the person.
 */
export function unauthorized(status: number, body: string): WireFailure {
  let said: unknown;
  try {
    const parsed: unknown = JSON.parse(body);
    said = isRecord(parsed) && isRecord(parsed.error) ? parsed.error.message : undefined;
  } catch {
    said = undefined;
  }
  const detail = typeof said === 'string' && said !== '' ? `: ${said}` : '';
  return new WireFailure('unauthorized', `HTTP ${status}${detail}`, { httpStatus: status });
}

/**
 * A failed plain call (a tool called without a task, so no submission key can find it): a definitive
 * refusal stays one (nothing ran); any other failure is marked `unkeyed`, since a lookup of the
 * executor's key proves nothing about a call the key never named (C12).
 */
export function unkeyed(failure: unknown): unknown {
  if (
    failure instanceof WireFailure &&
    (failure.kind === 'rejected' || failure.kind === 'not_found' || failure.kind === 'unauthorized')
  )
    return failure;
  const kind = failure instanceof WireFailure ? failure.kind : 'lost';
  const message = failure instanceof Error ? failure.message : String(failure);
  return new WireFailure(kind, message, {
    cause: failure,
    unkeyed: true,
    ...(failure instanceof WireFailure && failure.retryAfterMs !== undefined
      ? { retryAfterMs: failure.retryAfterMs }
      : {}),
    ...(failure instanceof WireFailure && failure.httpStatus !== undefined ? { httpStatus: failure.httpStatus } : {}),
  });
}
