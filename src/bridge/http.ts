/** Streamable HTTP for the bridge: node:http in front of the SDK's web-standard handler, on `/mcp`. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { McpHttpHandler } from '@modelcontextprotocol/server';

export interface BridgeHttpHandle {
  /** `http://host:port/mcp` */
  readonly url: string;
  close(): Promise<void>;
}

/** A Prometheus text exposition (prom-client's `Registry` is one). */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/**
 * Answers a `subscriptions/listen` request itself (the task front's pushes), or returns undefined
 * for the SDK to answer it.
 */
export type ListenRoute = (message: unknown, headers: Headers, signal: AbortSignal) => Promise<Response | undefined>;

/** Largest listen request body read before the SDK sees it (a listen body is a few hundred bytes). */
const MAX_LISTEN_BODY = 1_000_000;

/**
 * `/mcp` through `handler` (null: a listener for `/metrics` only, the stdio bridge's) and, with
 * `metrics`, `GET /metrics`; behind the same loopback Host/Origin check. With `listen`, a POST
 * whose `Mcp-Method` is `subscriptions/listen` is offered to it first.
 */
export async function serveBridgeHttp(
  handler: McpHttpHandler | null,
  options: {
    readonly port: number;
    readonly host?: string;
    readonly metrics?: MetricsSource;
    readonly listen?: ListenRoute;
  },
): Promise<BridgeHttpHandle> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    void serve(handler, req, res, host, options.metrics, options.listen);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/${handler === null ? 'metrics' : 'mcp'}`,
    close: async () => {
      await handler?.close().catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function serve(
  handler: McpHttpHandler | null,
  req: IncomingMessage,
  res: ServerResponse,
  host: string,
  metrics: MetricsSource | undefined,
  listen?: ListenRoute,
): Promise<void> {
  try {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? host}`);
    if (!allowedOrigin(req, host)) {
      // DNS rebinding: a web page must not reach a loopback bridge through a name it controls.
      res
        .writeHead(403, { 'content-type': 'text/plain' })
        .end('forbidden: Host or Origin is not this loopback bridge\n');
      return;
    }
    if (url.pathname === '/metrics' && metrics !== undefined) {
      if (req.method !== 'GET') {
        res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain' }).end('use GET /metrics\n');
        return;
      }
      const body = await metrics.metrics();
      res.writeHead(200, { 'content-type': metrics.contentType }).end(body);
      return;
    }
    if (url.pathname !== '/mcp' || handler === null) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the MCP endpoint is /mcp\n');
      return;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else if (value !== undefined) headers.set(name, value);
    }
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    let body: ReadableStream<Uint8Array> | string | undefined = hasBody
      ? (Readable.toWeb(req) as ReadableStream<Uint8Array>)
      : undefined;
    if (listen !== undefined && req.method === 'POST' && headers.get('mcp-method') === 'subscriptions/listen') {
      const text = await readSmall(req, MAX_LISTEN_BODY);
      if (text === null) {
        res.writeHead(413, { 'content-type': 'text/plain' }).end('a subscriptions/listen body is at most 1 MB\n');
        return;
      }
      const answered = await listen(parseOrNull(text), headers, controller.signal);
      if (answered !== undefined) {
        write(answered, res);
        return;
      }
      body = text;
    }
    const request = new Request(url, {
      method: req.method ?? 'GET',
      headers,
      signal: controller.signal,
      ...(body === undefined ? {} : { body, duplex: 'half' }),
    });
    write(await handler.fetch(request), res);
  } catch (error) {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`bridge error: ${String(error)}\n`);
  }
}

function write(response: Response, res: ServerResponse): void {
  res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
  if (response.body === null) {
    res.end();
    return;
  }
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  body.on('error', () => res.destroy());
  body.pipe(res);
}

/** The request body as text, or null past `limit` bytes (then the request has been consumed: a 413 follows). */
async function readSmall(req: IncomingMessage, limit: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** On a loopback bind, the Host (and an Origin, when sent) must name loopback too (MCP transport: validate Origin). */
function allowedOrigin(req: IncomingMessage, bound: string): boolean {
  if (!LOOPBACK.has(bound)) return true;
  const hostname = (value: string): string => {
    try {
      return new URL(value.includes('://') ? value : `http://${value}`).hostname;
    } catch {
      return '';
    }
  };
  if (req.headers.host !== undefined && !LOOPBACK.has(hostname(req.headers.host))) return false;
  const origin = req.headers.origin;
  return origin === undefined || LOOPBACK.has(hostname(origin));
}
