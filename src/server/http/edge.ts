import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { isJsonContentType, localhostAllowedOrigins, validateOriginHeader } from '@modelcontextprotocol/server';

/**
 * The rules every HTTP route obeys, `/mcp` and `/v1/...` alike (issue 12 items 6, 11), applied once
 * in `serveHttp` before any route runs: a well-formed `Host` on the allow-list, a decodable path, an
 * `Origin` on the allow-list (a web page must not start tools on a local server), a body only as
 * JSON in valid UTF-8 and nested at most `MAX_JSON_DEPTH` deep, and an `Accept` that admits JSON. A refused request
 * is answered in its route's dialect: a JSON-RPC error on the MCP endpoint, `google.rpc.Status`
 * elsewhere. Nothing refused here reaches a handler or the store.
 */

/**
 * Deepest JSON nesting accepted: MCP messages and tool arguments nest 5-10 levels; zod, our request
 * digest and the SDK recurse once per level, and 10,000 levels overflowed the stack (-32603).
 */
export const MAX_JSON_DEPTH = 64;

/** How a route's clients read errors: JSON-RPC on the MCP endpoint, `google.rpc.Status` elsewhere. */
export type Dialect = 'jsonrpc' | 'google';

/** `google.rpc.Code` names of the HTTP statuses the edge answers. */
const GOOGLE_STATUS: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  406: 'INVALID_ARGUMENT',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/** A refusal at the edge: HTTP status, a machine-readable reason and a message naming the fix. */
export interface EdgeRefusal {
  readonly status: number;
  readonly reason: string;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** The JSON-RPC code on the MCP endpoint; default `-32600` for a 400, else `-32000`. */
  readonly rpcCode?: number;
}

/** The refusal as the route's clients read errors. */
export function refusalResponse(refusal: EdgeRefusal, dialect: Dialect): Response {
  const body =
    dialect === 'jsonrpc'
      ? {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: refusal.rpcCode ?? (refusal.status === 400 ? -32600 : -32000),
            message: refusal.message,
            data: { reason: refusal.reason },
          },
        }
      : {
          error: {
            code: refusal.status,
            status: GOOGLE_STATUS[refusal.status] ?? 'UNKNOWN',
            message: refusal.message,
            details: [
              {
                '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
                reason: refusal.reason.toUpperCase(),
                domain: 'mcp-terminus.dev',
              },
            ],
          },
        };
  return new Response(JSON.stringify(body), {
    status: refusal.status,
    headers: { 'content-type': 'application/json', ...refusal.headers },
  });
}

export interface EdgeOptions {
  /** Host names (no port) accepted in `Host`; undefined: any well-formed Host. */
  readonly allowedHosts: readonly string[] | undefined;
  /** Origin host names accepted (`validateOriginHeader`); requests without `Origin` always pass. */
  readonly allowedOrigins: readonly string[];
}

/** Default Origin allow-list: the localhost names; other origins only when configured. */
export function defaultAllowedOrigins(): string[] {
  return localhostAllowedOrigins();
}

/** Checks on the request line and headers, before the body is read. */
export function checkHead(req: IncomingMessage, options: EdgeOptions): EdgeRefusal | undefined {
  const host = req.headers.host;
  const hostname = host === undefined ? undefined : cachedHost(host);
  if (hostname === undefined) {
    return { status: 400, reason: 'invalid_host', message: 'Missing or malformed Host header' };
  }
  if (options.allowedHosts !== undefined && !options.allowedHosts.includes(hostname)) {
    return { status: 403, reason: 'host_not_allowed', message: `Host not allowed: ${hostname}` };
  }
  const path = (req.url ?? '/').split('?')[0] as string;
  try {
    decodeURIComponent(path);
  } catch {
    return { status: 400, reason: 'invalid_path', message: 'Malformed percent-encoding in the request path' };
  }
  // A page served by this server (same host name as the request's Host) may call it.
  const origin = validateOriginHeader(req.headers.origin, [...options.allowedOrigins, hostname]);
  if (!origin.ok) {
    return {
      status: 403,
      reason: 'origin_not_allowed',
      message: `${origin.message}; allowed: ${options.allowedOrigins.join(', ')}`,
    };
  }
  return undefined;
}

/**
 * Checks on the body and what the client accepts. `streams`: the route may answer an SSE stream
 * (the MCP endpoint), so `text/event-stream` is acceptable there too. `form`: the route takes an
 * HTML form post instead of JSON.
 */
export function checkBody(
  req: IncomingMessage,
  body: Buffer | undefined,
  options: { readonly streams: boolean; readonly form?: boolean },
): EdgeRefusal | undefined {
  const { streams } = options;
  if (body !== undefined && body.length > 0 && options.form === true) {
    if (!isFormContentType(req.headers['content-type'])) {
      return {
        status: 415,
        reason: 'unsupported_media_type',
        message: 'Unsupported Media Type: send the form as Content-Type: application/x-www-form-urlencoded',
      };
    }
  } else if (body !== undefined && body.length > 0) {
    if (!isJsonContentType(req.headers['content-type'])) {
      return {
        status: 415,
        reason: 'unsupported_media_type',
        message: 'Unsupported Media Type: send the body as Content-Type: application/json',
      };
    }
    if (!isUtf8(body)) {
      // A lenient decode would turn the bad bytes into U+FFFD and store a string the client never sent.
      return {
        status: 400,
        reason: 'invalid_utf8',
        message: `Parse error: the body is not valid UTF-8 (byte ${firstInvalidUtf8(body)}); send JSON encoded in UTF-8`,
        rpcCode: -32700,
      };
    }
    if (jsonDepth(body) > MAX_JSON_DEPTH) {
      return { status: 400, reason: 'too_deep', message: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` };
    }
  }
  if (!accepts(req.headers.accept, streams)) {
    return {
      status: 406,
      reason: 'not_acceptable',
      message: `Not Acceptable: accept application/json${streams ? ' (and text/event-stream)' : ''}`,
    };
  }
  return undefined;
}

function isFormContentType(header: string | undefined): boolean {
  return header?.split(';')[0]?.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/**
 * `parseHost` by header value. It is a pure function and a server sees few distinct `Host` values,
 * while its `new URL()` was 11 of 263 us per fast-path `tasks/get` in the CPU profile (issue 14).
 * Bounded, so a client sending ever new values cannot grow it: past 256 they are parsed each time.
 */
function cachedHost(host: string): string | undefined {
  const hit = HOSTS.get(host);
  if (hit !== undefined || HOSTS.has(host)) return hit;
  const parsed = parseHost(host);
  if (HOSTS.size < MAX_CACHED_HOSTS) HOSTS.set(host, parsed);
  return parsed;
}

const MAX_CACHED_HOSTS = 256;
const HOSTS = new Map<string, string | undefined>();

/** The host name of a `Host` header (`name[:port]`, `[v6]:port`), undefined when malformed. */
function parseHost(host: string): string | undefined {
  if (host === '' || /[\s/\\?#@]/.test(host)) return undefined;
  try {
    const url = new URL(`http://${host}`);
    return url.hostname === '' ? undefined : url.hostname;
  } catch {
    return undefined;
  }
}

/** No header, `*\/*`, `application/*`, `application/json` (or `text/event-stream` on a streaming route). */
function accepts(header: string | undefined, streams: boolean): boolean {
  if (header === undefined || header.trim() === '') return true;
  return header.split(',').some((part) => {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    if (params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(p))) return false;
    const t = type.trim();
    return (
      t === '*/*' ||
      t === 'application/*' ||
      t === 'application/json' ||
      (streams && (t === 'text/event-stream' || t === 'text/*'))
    );
  });
}

/** Deepest `[`/`{` nesting of a JSON text, counted without parsing (strings skipped), so it cannot overflow. */
export function jsonDepth(body: Buffer): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/**
 * The offset of the first byte that breaks UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF), or `bytes.length` when every byte is valid. For messages only: `isUtf8` decides.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    let need: number;
    let low = 0x80;
    let high = 0xbf;
    if (b < 0x80) need = 0;
    else if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) low = 0xa0;
      if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) low = 0x90;
      if (b === 0xf4) high = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? low : 0x80) || c > (k === 1 ? high : 0xbf)) return i;
    }
    i += need + 1;
  }
  return bytes.length;
}
