/**
 * One AIP-151 HTTP/JSON exchange with the wire port's failure mapping: no answer (connection
 * refused or dropped, timeout, 5xx other than 503) -> `lost`; 429/503 -> `throttled` with
 * Retry-After; 404 -> `not_found`; 401/403 -> `unauthorized`; any other error status -> `rejected` carrying the AIP-193
 * `ErrorInfo.reason`; an unparsable 2xx body -> `malformed`.
 */
import type { Clock } from '../../../core/ports.js';
import { WireFailure } from '../../wire-port.js';
import { parseRetryAfter } from '../connection.js';
import { isRecord, malformed, unauthorized } from '../rpc-error.js';
import { traceMeta } from '../trace-context.js';

export interface AipHttpOptions {
  /** API root, e.g. `http://127.0.0.1:3000` (routes are `/v1/...` under it). */
  readonly baseUrl: string;
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly fetch?: typeof fetch;
}

/** An AIP-193 error answer: HTTP status plus `error.status` and the `ErrorInfo` reason. */
export class AipErrorFailure extends WireFailure {
  readonly rpcStatus: string | undefined;
  readonly reason: string | undefined;

  constructor(
    kind: 'rejected' | 'not_found',
    message: string,
    httpStatus: number,
    rpcStatus: string | undefined,
    reason: string | undefined,
  ) {
    super(kind, message, { httpStatus });
    this.name = 'AipErrorFailure';
    this.rpcStatus = rpcStatus;
    this.reason = reason;
  }
}

export type AipRequest = (
  method: 'GET' | 'POST',
  path: string,
  body: Record<string, unknown> | undefined,
  signal?: AbortSignal,
) => Promise<unknown>;

export function createAipHttp(options: AipHttpOptions): AipRequest {
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');

  return async (method, path, body, signal) => {
    const abort = new AbortController();
    const onAbort = (): void => abort.abort(signal?.reason);
    if (signal?.aborted === true) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = new AbortController();
    let timedOut = false;
    options.clock.sleep(options.timeoutMs, timer.signal).then(
      () => {
        timedOut = true;
        abort.abort();
      },
      () => undefined,
    );
    let response: Response;
    let text: string;
    try {
      response = await doFetch(`${base}${path}`, {
        method,
        headers: {
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...traceMeta(),
          ...options.headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: abort.signal,
      });
      // Read inside the timeout: a body cut half-way is `lost`, never a hang.
      text = await response.text();
    } catch (error) {
      const why = timedOut ? 'timed out' : signal?.aborted === true ? 'aborted locally' : 'connection failed';
      throw new WireFailure('lost', `${method} ${path}: ${why}`, { cause: error });
    } finally {
      timer.abort();
      signal?.removeEventListener('abort', onAbort);
    }
    return readAnswer(response, text, `${method} ${path}`, options.clock.now());
  };
}

function readAnswer(response: Response, text: string, what: string, now: number): unknown {
  const status = response.status;
  if (status === 429 || status === 503) {
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), now);
    throw new WireFailure('throttled', `${what}: HTTP ${status}`, {
      httpStatus: status,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (status >= 500) throw new WireFailure('lost', `${what}: HTTP ${status}`, { httpStatus: status });
  if (status === 401 || status === 403) {
    const refused = unauthorized(status, text);
    throw new WireFailure('unauthorized', `${what}: ${refused.message}`, { httpStatus: status });
  }
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch (error) {
    if (status >= 400) throw errorAnswer(status, undefined, what);
    throw malformed(`${what}: unparsable JSON`, error);
  }
  if (status >= 400) throw errorAnswer(status, parsed, what);
  if (status < 200 || status > 299) throw malformed(`${what}: unexpected HTTP ${status}`);
  return parsed;
}

function errorAnswer(status: number, body: unknown, what: string): AipErrorFailure {
  const error = isRecord(body) && isRecord(body.error) ? body.error : {};
  const message = typeof error.message === 'string' ? error.message : `HTTP ${status}`;
  const rpcStatus = typeof error.status === 'string' ? error.status : undefined;
  const details = Array.isArray(error.details) ? (error.details as unknown[]) : [];
  const info = details.find((d) => isRecord(d) && typeof d.reason === 'string');
  const reason = isRecord(info) && typeof info.reason === 'string' ? info.reason : undefined;
  return new AipErrorFailure(
    status === 404 ? 'not_found' : 'rejected',
    `${what}: ${message}`,
    status,
    rpcStatus,
    reason,
  );
}
