import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/server';

/**
 * The SDK's era decision for one POSTed JSON body, in plain code (issue 14): the revision the SDK's
 * `classifyInboundRequest` (SDK 2.4, zod 4.6) would route as a modern *request*, else `undefined`.
 * The SDK's classifier was 62 % of the fast path's own CPU (13 of 21 us per `tasks/get`): it runs
 * its result- and error-response zod guards first, and each failing parse builds an issue list only
 * to answer `false`, then the request guard, then the envelope schema.
 *
 * Exact for every body `JSON.parse` can produce (the bridge's parse is the only caller's input):
 * `test/server/modern-request.test.ts` runs a generated corpus of valid and invalid bodies through
 * this and the SDK's classifier and asserts the same answer for each. What it mirrors, rung by rung
 * (the SDK's `classifyRequestBody` and the zod schemas it reads):
 *
 * - a strict JSON-RPC request: only `jsonrpc` ("2.0"), `id` (a string or a safe integer), `method`
 *   (a string) and `params` (absent or an object whose `_meta`, when present, is an object with a
 *   string-or-safe-integer `progressToken` and a `{ taskId: string }` related-task key, each
 *   optional); zod counts an own `__proto__` member as an unknown key. Such a body is never a
 *   result or error response (strict too, and `method` is not one of their keys), so the SDK's two
 *   response guards are false for it and need not run;
 * - the envelope claim (the protocol-version key in `params._meta`), and the envelope schema;
 * - `initialize` only with a claim naming a modern revision (else it is the legacy handshake);
 * - the `MCP-Protocol-Version` and `Mcp-Method` headers, optional whitespace stripped, equal to
 *   the claim and the method when present.
 *
 * The headers' presence and `Mcp-Name` (`validateStandardRequestHeaders`) are not part of the
 * classifier; the fast path checks those itself.
 */
export function modernRequestRevision(
  body: unknown,
  protocolVersionHeader: string | undefined,
  mcpMethodHeader: string | undefined,
): string | undefined {
  if (!isObject(body) || !isJsonRpcRequest(body)) return undefined;
  const params = body.params;
  const meta = isObject(params) ? params._meta : undefined;
  // No claim: the SDK routes it legacy, or refuses a modern header without one.
  if (!isObject(meta) || !(PROTOCOL_VERSION_META_KEY in meta) || !isEnvelope(meta)) return undefined;
  const claimed = meta[PROTOCOL_VERSION_META_KEY] as string;
  const method = body.method as string;
  // `isModernProtocolVersion`: revisions are ISO dates, compared as strings.
  if (method === 'initialize' && !(claimed >= FIRST_MODERN_REVISION)) return undefined;
  if (protocolVersionHeader !== undefined && stripOws(protocolVersionHeader) !== claimed) return undefined;
  if (mcpMethodHeader !== undefined && stripOws(mcpMethodHeader) !== method) return undefined;
  return claimed;
}

/** SDK 2.4 `FIRST_MODERN_PROTOCOL_VERSION`. */
const FIRST_MODERN_REVISION = '2026-07-28';

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';
const LOG_LEVELS = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);

/** `JSONRPCRequestSchema` (strict) with `RequestSchema.params` (loose) and `RequestMetaSchema`. */
function isJsonRpcRequest(body: Record<string, unknown>): boolean {
  // zod's strict object walks `for...in` and reports every undeclared key, `__proto__` included.
  for (const key in body) if (!REQUEST_KEYS.has(key)) return false;
  if (body.jsonrpc !== '2.0' || !isStringOrSafeInt(body.id) || typeof body.method !== 'string') return false;
  const params = body.params;
  if (params === undefined) return true;
  if (!isObject(params)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isObject(meta)) return false;
  if (meta.progressToken !== undefined && !isStringOrSafeInt(meta.progressToken)) return false;
  const related = meta[RELATED_TASK_META_KEY];
  return related === undefined || (isObject(related) && typeof related.taskId === 'string');
}

/** The 2026 codec's `RequestMetaEnvelopeSchema` (loose): `validateEnvelopeMeta` finds no issue. */
function isEnvelope(meta: Record<string, unknown>): boolean {
  if (meta.progressToken !== undefined && !isStringOrSafeInt(meta.progressToken)) return false;
  if (typeof meta[PROTOCOL_VERSION_META_KEY] !== 'string') return false;
  const info = meta[CLIENT_INFO_META_KEY];
  if (info !== undefined && !isImplementation(info)) return false;
  if (!isClientCapabilities(meta[CLIENT_CAPABILITIES_META_KEY])) return false;
  const level = meta[LOG_LEVEL_META_KEY];
  return level === undefined || (typeof level === 'string' && LOG_LEVELS.has(level));
}

/** `ImplementationSchema` (2026): name, version; title, icons, websiteUrl, description optional. */
function isImplementation(value: unknown): boolean {
  if (!isObject(value) || typeof value.name !== 'string' || typeof value.version !== 'string') return false;
  if (!optionalString(value.title) || !optionalString(value.websiteUrl) || !optionalString(value.description)) {
    return false;
  }
  const icons = value.icons;
  if (icons === undefined) return true;
  if (!Array.isArray(icons)) return false;
  for (const icon of icons as unknown[]) if (!isIcon(icon)) return false;
  return true;
}

/** `IconSchema`: `src`; `mimeType`, `sizes` (strings), `theme` (light or dark) optional. */
function isIcon(value: unknown): boolean {
  if (!isObject(value) || typeof value.src !== 'string' || !optionalString(value.mimeType)) return false;
  const theme = value.theme;
  if (theme !== undefined && theme !== 'light' && theme !== 'dark') return false;
  const sizes = value.sizes;
  if (sizes === undefined) return true;
  if (!Array.isArray(sizes)) return false;
  for (const size of sizes as unknown[]) if (typeof size !== 'string') return false;
  return true;
}

/** `ClientCapabilities2026Schema` (strip: other members, `tasks` included, are not looked at). */
function isClientCapabilities(value: unknown): boolean {
  if (!isObject(value)) return false;
  const { experimental, sampling, elicitation, roots, extensions } = value;
  if (experimental !== undefined && !isRecordOfJsonObjects(experimental)) return false;
  if (extensions !== undefined && !isRecordOfJsonObjects(extensions)) return false;
  if (sampling !== undefined) {
    if (!isObject(sampling)) return false;
    if (!optionalJsonObject(sampling.context) || !optionalJsonObject(sampling.tools)) return false;
  }
  if (roots !== undefined) {
    if (!isObject(roots)) return false;
    if (roots.listChanged !== undefined && typeof roots.listChanged !== 'boolean') return false;
  }
  return elicitation === undefined || isElicitation(elicitation);
}

/**
 * `ElicitationCapabilitySchema`: an object that is also a JSON object (the intersection), whose
 * `form` is a JSON object with a boolean `applyDefaults` when present and whose `url` is a JSON
 * object. (Its preprocess step turns `{}` into `{ form: {} }`, which passes the same.)
 */
function isElicitation(value: unknown): boolean {
  if (!isJsonObject(value)) return false;
  const { form, url } = value as Record<string, unknown>;
  if (form !== undefined) {
    if (!isJsonObject(form)) return false;
    const apply = (form as Record<string, unknown>).applyDefaults;
    if (apply !== undefined && typeof apply !== 'boolean') return false;
  }
  return optionalJsonObject(url);
}

function isRecordOfJsonObjects(value: unknown): boolean {
  if (!isObject(value)) return false;
  for (const key of Object.keys(value)) {
    // zod's record skips an own `__proto__` member without looking at its value.
    if (key !== '__proto__' && !isJsonObject(value[key])) return false;
  }
  return true;
}

function optionalJsonObject(value: unknown): boolean {
  return value === undefined || isJsonObject(value);
}

/** `JSONObjectSchema`: `z.record(z.string(), JSONValueSchema)`. */
function isJsonObject(value: unknown): boolean {
  if (!isObject(value)) return false;
  for (const key of Object.keys(value)) {
    if (key !== '__proto__' && !isJsonValue(value[key])) return false;
  }
  return true;
}

/** `JSONValueSchema`: zod's `z.number()` refuses the infinities `JSON.parse` makes of `1e400`. */
function isJsonValue(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      if (value === null) return true;
      if (!Array.isArray(value)) return isJsonObject(value);
      for (const item of value as unknown[]) if (!isJsonValue(item)) return false;
      return true;
    default:
      return false;
  }
}

function optionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

/** `z.union([z.string(), z.number().int()])`: zod 4's `.int()` is the safe-integer range. */
function isStringOrSafeInt(value: unknown): boolean {
  return typeof value === 'string' || Number.isSafeInteger(value);
}

/** zod's `isObject`. Every object `JSON.parse` makes is also plain, as `z.record` requires. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The SDK's `stripHttpOws`: RFC 9110 optional whitespace (SP, HTAB) off both ends. */
function stripOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value.charCodeAt(start))) start += 1;
  while (end > start && isOws(value.charCodeAt(end - 1))) end -= 1;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function isOws(code: number): boolean {
  return code === 9 || code === 32;
}
