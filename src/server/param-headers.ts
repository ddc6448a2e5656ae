import { ProtocolError } from '@modelcontextprotocol/server';
import { decodeParamValue, headerText, PARAM_HEADER_PREFIX, valueAt, type ParamHeader } from '../core/param-headers.js';

export { paramHeadersOf, type ParamHeader } from '../core/param-headers.js';

/**
 * The server's SEP-2243 check (see `core/param-headers.ts`): the header MUST be there whenever the
 * body carries the value and decode to the same value; a Base64 value MUST be canonical. Any
 * disagreement is `-32020` (HeaderMismatch), HTTP 400, before the tool runs.
 */

const DECIMAL = /^-?\d+(\.\d+)?$/;

/** `-32020` when a declared header is missing, not canonical Base64, or disagrees with the body. */
export function checkParamHeaders(
  declared: readonly ParamHeader[],
  args: Record<string, unknown>,
  header: (name: string) => string | null | undefined,
): ProtocolError | undefined {
  for (const d of declared) {
    const value = valueAt(args, d.path);
    const body = headerText(value);
    if (body === undefined) continue; // absent, null or not a primitive: no header is expected
    const name = `${PARAM_HEADER_PREFIX}${d.header}`;
    const raw = header(name);
    if (raw === null || raw === undefined)
      return mismatch(name, `the body carries ${d.path.join('.')} but the ${name} header is absent`);
    const decoded = decodeParamValue(raw.trim());
    if (decoded === undefined) return mismatch(name, `the ${name} header is not canonical Base64`);
    const same =
      typeof value === 'number' && (d.type === 'integer' || d.type === 'number') && DECIMAL.test(decoded)
        ? Number(decoded) === value
        : decoded === body;
    if (!same) return mismatch(name, `the ${name} header does not match ${d.path.join('.')} in the body`);
  }
  return undefined;
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
