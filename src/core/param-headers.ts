/**
 * SEP-2243 custom parameter headers (2026-07-28 Streamable HTTP), the pure part both sides share: a
 * tool whose input schema marks a property `"x-mcp-header": "Region"` has its value mirrored by the
 * client in `Mcp-Param-Region`, so proxies can route on it. A value that is not plain printable
 * ASCII (or has edge whitespace, or is empty) travels as `=?base64?<base64 of its UTF-8>?=`.
 */

/** One `x-mcp-header` property: where it is in the arguments, its header name and JSON type. */
export interface ParamHeader {
  readonly path: readonly string[];
  readonly header: string;
  readonly type: string | undefined;
}

export const PARAM_HEADER_PREFIX = 'Mcp-Param-';
const KEY = 'x-mcp-header';
const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

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

/** The value at `path` in the arguments, else undefined. */
export function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** The header text of a primitive argument (the SEP's conversion), else undefined. */
export function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A header value as text: the Base64 sentinel decoded (strict UTF-8), anything else literal; undefined when undecodable. */
export function decodeParamValue(value: string): string | undefined {
  if (!(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX))) return value;
  const b64 = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(b64)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(b64, 'base64'));
  } catch {
    return undefined;
  }
}

/** `text` as a header value: literal when it is plain printable ASCII, else the Base64 sentinel. */
export function encodeParamValue(text: string): string {
  const plain =
    text.length > 0 &&
    text === text.trim() &&
    !(text.startsWith(SENTINEL_PREFIX) && text.endsWith(SENTINEL_SUFFIX)) &&
    /^[\t\x20-\x7e]*$/.test(text);
  return plain ? text : `${SENTINEL_PREFIX}${Buffer.from(text, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/** The `Mcp-Param-*` headers a client sends for `args` (absent, null or non-primitive values: none). */
export function paramHeadersFor(
  declared: readonly ParamHeader[],
  args: Record<string, unknown>,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const d of declared) {
    const text = headerText(valueAt(args, d.path));
    if (text !== undefined) headers[`${PARAM_HEADER_PREFIX}${d.header}`] = encodeParamValue(text);
  }
  return headers;
}
