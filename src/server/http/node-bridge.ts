import type { IncomingMessage, ServerResponse } from 'node:http';

/** node:http <-> web-standard `Request`/`Response`, the only Node-specific part of the HTTP layer. */

export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`request body over ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** A request as the bridge read it: the web `Request`, its bytes, and its JSON parsed once. */
export interface BridgedRequest {
  readonly request: Request;
  readonly body: Buffer | undefined;
  /**
   * The POST body parsed as JSON, once, for every consumer (prechecks, the legacy routing, the SDK
   * as `parsedBody`); undefined when there is none or it is not JSON (then the SDK reads the body
   * itself and answers its own parse error). Before, each body was parsed three times and the SDK
   * cloned the `Request` to read it again (issue 14: the bridging was 45 % of a `tasks/get`).
   */
  readonly parsedBody: unknown;
}

/**
 * Reads the body (bounded: the SDK's own default is 4 MiB) and builds a `Request` whose signal
 * aborts when the client goes away, which the SDK treats as cancelling that request.
 */
export async function toWebRequest(
  req: IncomingMessage,
  signal: AbortSignal,
  maxBodyBytes: number,
): Promise<BridgedRequest> {
  const { body, parsedBody } = await readBody(req, maxBodyBytes);
  return { request: webRequestOf(req, body, signal), body, parsedBody };
}

/** A body as read off the socket: its bytes and, for a POST, its JSON parsed once. */
export interface ReadBody {
  readonly body: Buffer | undefined;
  readonly parsedBody: unknown;
}

/**
 * Reads the body, bounded (rejects with `BodyTooLargeError` past `maxBodyBytes`), and parses a POST
 * body as JSON once. The task-method fast path answers from this alone, without a web `Request`.
 *
 * Read with `data`/`end` listeners, not `for await`: the stream's async iterator (its promise per
 * chunk and its end-of-stream watcher) was 29 of the fast path's 364 us per `tasks/get` in the CPU
 * profile (issue 14). As the iterator did, a request read to its end is destroyed (a finished one
 * just closes), and one that closes before its end rejects.
 */
export function readBody(req: IncomingMessage, maxBodyBytes: number): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        // Not destroyed: the caller answers 413 with `connection: close` and drains the rest.
        stop();
        reject(new BodyTooLargeError(maxBodyBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      req.destroy();
      const body = chunks.length === 0 ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      resolve({ body, parsedBody: req.method === 'POST' ? parseJson(body) : undefined });
    };
    const onError = (error: Error): void => {
      stop();
      reject(error);
    };
    const onClose = (): void => {
      stop();
      reject(new Error('the request closed before its body ended'));
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
  });
}

/** The web `Request` of a node request whose body was already read. */
export function webRequestOf(req: IncomingMessage, body: Buffer | undefined, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const url = `http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
  const method = req.method ?? 'GET';
  const hasBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
  return new Request(url, { method, headers, signal, ...(hasBody ? { body } : {}) });
}

function parseJson(body: Buffer | undefined): unknown {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * A signal that aborts when the client leaves before its exchange finished: `close` fires after
 * every exchange, and aborting a finished one built an `AbortSignal` reason (a `DOMException`) and
 * ran the SDK's abort listeners for nothing (12 % of a `tasks/get`'s CPU, issue 14).
 */
export function abortWhenUnfinished(res: ServerResponse): AbortSignal {
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}

/**
 * Writes a `Response`. A complete body (JSON, anything but an event stream) goes out with its
 * headers in ONE socket write (`end(bytes)` before any header was flushed; it was three:
 * headers, body chunk, end). An event stream is streamed frame by frame until it ends or the
 * client leaves.
 */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name === 'set-cookie') return;
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  if (response.body === null) {
    res.writeHead(response.status, response.statusText, headers);
    res.end();
    return;
  }
  if (!isEventStream(response.headers.get('content-type'))) {
    const bytes = Buffer.from(await response.arrayBuffer());
    delete headers['transfer-encoding'];
    headers['content-length'] = String(bytes.length);
    res.writeHead(response.status, response.statusText, headers);
    res.end(bytes);
    return;
  }
  res.writeHead(response.status, response.statusText, headers);
  // SSE needs each frame on the wire now, not when Node's buffer fills.
  res.flushHeaders();
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  res.on('close', stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
    }
  } catch {
    // the client went away mid-stream; nothing left to answer
  } finally {
    res.off('close', stop);
    res.end();
  }
}

function isEventStream(contentType: string | null): boolean {
  return contentType !== null && contentType.split(';')[0]?.trim().toLowerCase() === 'text/event-stream';
}

/** Answers `body` as JSON in one write. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * Writes a complete answer in one socket write, exactly as `writeWebResponse` writes a JSON
 * `Response` (an empty reason phrase, as a web `Response` has; `content-length` from the bytes).
 */
export function writeAnswer(
  res: ServerResponse,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: string,
): void {
  const bytes = Buffer.from(body, 'utf8');
  res.writeHead(status, '', { ...headers, 'content-length': String(bytes.length) });
  res.end(bytes);
}

/**
 * Writes a complete SSE answer as `writeWebResponse` streams an event-stream `Response` of one
 * event: the same headers, chunked (no `content-length`), the event and the end corked into one
 * socket write.
 */
export function writeEventAnswer(
  res: ServerResponse,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: string,
): void {
  // Corked so the head, the chunk and the terminating chunk leave together; end() uncorks.
  res.cork();
  res.writeHead(status, '', headers);
  res.write(body);
  res.end();
}
