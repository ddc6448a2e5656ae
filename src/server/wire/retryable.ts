import { ProtocolError } from '@modelcontextprotocol/server';

/**
 * The one answer every MCP wire gives when the engine says `unavailable` (a busy or full store, a
 * stopping node): a retryable server error, never `-32603` (issue 12 item 11). JSON-RPC leaves
 * -32000..-32099 to servers; ours is `UNAVAILABLE_RPC_CODE` with `data.reason: "unavailable"`,
 * `data.retryable: true` and `data.retryAfterMs`. Over HTTP the edge also makes the response a 503
 * with `Retry-After`, which every HTTP client (and our executor, C6) backs off on.
 */
export const UNAVAILABLE_RPC_CODE = -32050;

/** Suggested wait before a retry: a busy SQLite write lock clears within its 5 s busy timeout. */
export const UNAVAILABLE_RETRY_AFTER_MS = 1000;

/** The retryable `UNAVAILABLE_RPC_CODE` error every MCP wire answers for an `unavailable` engine. */
export function unavailableError(): ProtocolError {
  return new ProtocolError(UNAVAILABLE_RPC_CODE, 'Service unavailable, retry later', {
    reason: 'unavailable',
    retryable: true,
    retryAfterMs: UNAVAILABLE_RETRY_AFTER_MS,
  });
}

/**
 * An HTTP answer carrying that error as a plain JSON body becomes a 503 with `Retry-After` (the body
 * is unchanged). Streamed (SSE) answers have sent their status already; they keep the JSON-RPC error.
 */
export async function asRetryableHttp(response: Response): Promise<Response> {
  if (response.status !== 200 || !(response.headers.get('content-type') ?? '').includes('application/json')) {
    return response;
  }
  const text = await response.text();
  let code: unknown;
  try {
    code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
  } catch {
    code = undefined;
  }
  const headers = new Headers(response.headers);
  if (code !== UNAVAILABLE_RPC_CODE) return new Response(text, { status: response.status, headers });
  headers.set('retry-after', String(Math.ceil(UNAVAILABLE_RETRY_AFTER_MS / 1000)));
  return new Response(text, { status: 503, headers });
}
