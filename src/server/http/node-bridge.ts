import type { IncomingMessage, ServerResponse } from 'node:http';

/** node:http <-> web-standard `Request`/`Response`, the only Node-specific part of the HTTP layer. */

export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`request body over ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * Reads the body (bounded: the SDK's own default is 4 MiB) and builds a `Request` whose signal
 * aborts when the client goes away, which the SDK treats as cancelling that request.
 */
export async function toWebRequest(
  req: IncomingMessage,
  signal: AbortSignal,
  maxBodyBytes: number,
): Promise<{ request: Request; body: Buffer | undefined }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > maxBodyBytes) throw new BodyTooLargeError(maxBodyBytes);
    chunks.push(buf);
  }
  const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const url = `http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
  const method = req.method ?? 'GET';
  const hasBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
  const request = new Request(url, { method, headers, signal, ...(hasBody ? { body } : {}) });
  return { request, body };
}

/** Writes a `Response`, streaming its body (SSE included) until it ends or the client leaves. */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name === 'set-cookie') return;
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  res.writeHead(response.status, response.statusText, headers);
  if (response.body === null) {
    res.end();
    return;
  }
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
