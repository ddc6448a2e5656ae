import { ProtocolError } from '@modelcontextprotocol/server';

/**
 * SEP-2243 custom parameter headers (2026-07-28 Streamable HTTP): a tool whose input schema marks a
 * property `"x-mcp-header": "Region"` gets its value mirrored by the client in `Mcp-Param-Region`,
 * so proxies can route on it. The server MUST check that the header is there whenever the body
 * carries the value and that it decodes to the same value; a Base64 value is wrapped as
 * `=?base64?...?=` and MUST be canonical Base64. Any disagreement is `-32020` (HeaderMismatch),
 * HTTP 400, before the tool runs.
 */

/** One `x-mcp-header` property: where it is in the arguments, its header name and JSON type. */
export interface ParamHeader {
  readonly path: readonly string[];
  readonly header: string;
  readonly type: string | undefined;
}

const KEY = 'x-mcp-header';
const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

const declared = new WeakMap<object, readonly ParamHeader[]>();

/** The `x-mcp-header` properties reachable from the root through `properties` only (the SEP's rule). */
export function paramHeadersOf(inputSchema: Record<string, unknown>): readonly ParamHeader[] {
  let headers = declared.get(inputSchema);
  if (headers === undefined) {
    headers = scan(inputSchema);
    declared.set(inputSchema, headers);
  }
  return headers;
}

function scan(inputSchema: Record<string, unknown>): ParamHeader[] {
  const found: ParamHeader[] = [];
  const visit = (node: unknown, path: string[]): void => {
    if (typeof node !== 'object' || node === null) return;
    const schema = node as Record<string, unknown>;
    const header = schema[KEY];
    if (path.length > 0 && typeof header === 'string' && header.length > 0) {
      found.push({ path, header, type: typeof schema.type === 'string' ? schema.type : undefined });
    }
    const properties = schema.properties;
    if (typeof properties !== 'object' || properties === null) return;
    for (const [name, child] of Object.entries(properties)) visit(child, [...path, name]);
  };
  visit(inputSchema, []);
  return found;
}

/** `-32020` when a declared header is missing, not canonical Base64, or disagrees with the body. */
export function checkParamHeaders(
  declared: readonly ParamHeader[],
  args: Record<string, unknown>,
  header: (name: string) => string | null | undefined,
): ProtocolError | undefined {
  for (const d of declared) {
    const value = valueAt(args, d.path);
    const body = asHeaderText(value);
    if (body === undefined) continue; // absent, null or not a primitive: no header is expected
    const name = `Mcp-Param-${d.header}`;
    const raw = header(name);
    if (raw === null || raw === undefined)
      return mismatch(name, `the body carries ${d.path.join('.')} but the ${name} header is absent`);
    const decoded = decode(raw.trim());
    if (decoded === undefined) return mismatch(name, `the ${name} header is not canonical Base64`);
    const same =
      typeof value === 'number' && (d.type === 'integer' || d.type === 'number') && DECIMAL.test(decoded)
        ? Number(decoded) === value
        : decoded === body;
    if (!same) return mismatch(name, `the ${name} header does not match ${d.path.join('.')} in the body`);
  }
  return undefined;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** The header text of a primitive argument (the SEP's conversion), else undefined. */
function asHeaderText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A header value as text: the Base64 sentinel decoded (strict UTF-8), anything else literal. */
function decode(value: string): string | undefined {
  if (!(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX))) return value;
  const b64 = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(b64)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(b64, 'base64'));
  } catch {
    return undefined;
  }
}

function mismatch(header: string, detail: string): ProtocolError {
  return new ProtocolError(-32020, `Bad Request: the request headers and body disagree: ${detail}`, {
    reason: 'header_mismatch',
    mismatch: { header },
  });
}

/**
 * The HTTP answer to a mismatch, before the SDK sees the request: the status is 400 (the SDK would
 * send a handler's `-32020` in-band, with 200).
 */
export function mismatchResponse(id: unknown, error: ProtocolError): Response {
  return Response.json(
    { jsonrpc: '2.0', id: id ?? null, error: { code: error.code, message: error.message, data: error.data } },
    { status: 400 },
  );
}
