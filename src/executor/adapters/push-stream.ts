/**
 * The long-lived push stream of an HTTP connection: the Tasks extension's `subscriptions/listen`
 * (a POST whose answer is an event stream that stays open, reference 2.7) or the GET stream of a
 * 2025-11-25 session (reference 1.11). Its frames are handed to the connection's notification
 * listeners like those of any POST stream; it never carries the answer to another request.
 *
 * A refusal is typed like a request failure: 429/503 are `throttled` (too many streams: try later),
 * a JSON-RPC error or a 4xx is `rejected` (this server has no such stream: poll), no answer is
 * `lost`. An accepted stream reports its end through `ended` (the server closed it, the connection
 * dropped, or the caller aborted the signal).
 */
import type { Clock } from '../../core/ports.js';
import { WireFailure } from '../wire-port.js';
import { parseRetryAfter, type OpenedStream } from './connection.js';

export interface PushStreamDeps {
  readonly url: string;
  readonly fetch: typeof fetch;
  readonly clock: Clock;
  readonly headers: Readonly<Record<string, string>>;
  /** The POST body (listen) or undefined (GET). */
  readonly body?: unknown;
  /** One event-stream frame, as the connection reads any stream's frames. */
  readonly onFrame: (frame: string) => void;
  /** The listen request's JSON-RPC id: an answer to it on the stream means the server ended the subscription. */
  readonly answerId?: number;
}

/** Opens the stream; rejects with a `WireFailure` when the server does not accept it. */
export async function openPushStream(deps: PushStreamDeps, signal: AbortSignal): Promise<OpenedStream> {
  let response: Response;
  try {
    response = await deps.fetch(deps.url, {
      method: deps.body === undefined ? 'GET' : 'POST',
      headers: deps.headers,
      ...(deps.body === undefined ? {} : { body: JSON.stringify(deps.body) }),
      signal,
    });
  } catch (error) {
    throw new WireFailure('lost', `push stream not opened: ${String(error)}`, { cause: error });
  }
  const contentType = response.headers.get('content-type') ?? '';
  if (response.status !== 200 || !contentType.includes('text/event-stream') || response.body === null) {
    await response.body?.cancel().catch(() => undefined);
    const status = response.status;
    if (status === 429 || status === 503) {
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), deps.clock.now());
      throw new WireFailure('throttled', `push stream refused: HTTP ${status}`, {
        httpStatus: status,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      });
    }
    if (status >= 500) throw new WireFailure('lost', `push stream refused: HTTP ${status}`, { httpStatus: status });
    // A 200 JSON answer is the listen request answered at once (an error, or a subscription the
    // server will not keep): nothing will be pushed on it.
    throw new WireFailure('rejected', `push stream refused: HTTP ${status} ${contentType}`, { httpStatus: status });
  }
  return { ended: readFrames(response.body, deps, signal) };
}

async function readFrames(body: ReadableStream<Uint8Array>, deps: PushStreamDeps, signal: AbortSignal) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const onAbort = (): void => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return signal.aborted ? 'closed by the client' : 'closed by the server';
      buffer += decoder.decode(value, { stream: true });
      const frames = buffer.split(/\r?\n\r?\n/);
      buffer = frames.pop() ?? '';
      for (const frame of frames) {
        if (deps.answerId !== undefined && answers(frame, deps.answerId)) return 'subscription ended by the server';
        try {
          deps.onFrame(frame);
        } catch {
          // A garbled push is a lost hint, nothing more: polling reads the truth.
        }
      }
    }
  } catch (error) {
    return signal.aborted ? 'closed by the client' : `stream dropped: ${String(error)}`;
  } finally {
    signal.removeEventListener('abort', onAbort);
    reader.cancel().catch(() => undefined);
  }
}

function answers(frame: string, id: number): boolean {
  const data = frame
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
  if (data === '') return false;
  try {
    const message = JSON.parse(data) as Record<string, unknown> | null;
    return message !== null && message.id === id && ('result' in message || 'error' in message);
  } catch {
    return false;
  }
}
