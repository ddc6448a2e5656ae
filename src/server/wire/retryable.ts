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
 * Longest wait for an SSE answer's first event before its headers go out: an unavailable store
 * fails a request within milliseconds, while a blocking `tasks/result` may hold its first event for
 * hours and must get its 200 headers now (undici gives up on headers after 300 s).
 */
const SSE_PEEK_MS = 250;

/**
 * A POST answer whose first JSON-RPC message is that error becomes a 503 with `Retry-After` (the
 * body is unchanged). A plain JSON body is read whole; an SSE body (the 2025 legs) up to its first
 * event or for `SSE_PEEK_MS`, whichever is first, then streamed on with the rest.
 */
export async function asRetryableHttp(request: Request, response: Response): Promise<Response> {
  const type = response.headers.get('content-type') ?? '';
  if (request.method !== 'POST' || response.status !== 200 || response.body === null) return response;
  if (type.includes('application/json')) {
    const text = await response.text();
    return withStatus(text, response, isUnavailable(text));
  }
  if (!type.includes('text/event-stream')) return response;
  const reader = response.body.getReader();
  const head: Uint8Array[] = [];
  let seen = '';
  let ended = false;
  let pending: ReturnType<typeof reader.read> | undefined;
  const decoder = new TextDecoder();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), SSE_PEEK_MS);
  });
  // One SSE event ends at a blank line; our events are one `data:` line of a few hundred bytes.
  while (!seen.includes('\n\n')) {
    pending = reader.read();
    const next = await Promise.race([pending, expired]);
    if (next === 'expired') break;
    pending = undefined;
    if (next.done) {
      ended = true;
      break;
    }
    head.push(next.value);
    seen += decoder.decode(next.value, { stream: true });
  }
  clearTimeout(timer);
  const firstData = /^data:(.*)$/m.exec(seen.split('\n\n')[0] ?? '')?.[1];
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of head) controller.enqueue(chunk);
      if (ended) controller.close();
    },
    async pull(controller) {
      const { done, value } = await (pending ?? reader.read());
      pending = undefined;
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return withStatus(body, response, firstData !== undefined && isUnavailable(firstData));
}

function isUnavailable(json: string): boolean {
  try {
    return (JSON.parse(json) as { error?: { code?: unknown } }).error?.code === UNAVAILABLE_RPC_CODE;
  } catch {
    return false;
  }
}

function withStatus(body: string | ReadableStream<Uint8Array>, response: Response, unavailable: boolean): Response {
  const headers = new Headers(response.headers);
  if (!unavailable) return new Response(body, { status: response.status, headers });
  headers.set('retry-after', String(Math.ceil(UNAVAILABLE_RETRY_AFTER_MS / 1000)));
  return new Response(body, { status: 503, headers });
}
