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
 * `/mcp` through `handler` (null: a listener for `/metrics` only, the stdio bridge's) and, with
 * `metrics`, `GET /metrics`; behind the same loopback Host/Origin check.
 */
export async function serveBridgeHttp(
  handler: McpHttpHandler | null,
  options: { readonly port: number; readonly host?: string; readonly metrics?: MetricsSource },
): Promise<BridgeHttpHandle> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    void serve(handler, req, res, host, options.metrics);
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
    const request = new Request(url, {
      method: req.method ?? 'GET',
      headers,
      signal: controller.signal,
      ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
    if (response.body === null) {
      res.end();
      return;
    }
    const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
    body.on('error', () => res.destroy());
    body.pipe(res);
  } catch (error) {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`bridge error: ${String(error)}\n`);
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
