/**
 * A tool's result as a server sent it, checked against the MCP SDK's own `CallToolResult` schema
 * (content blocks, `isError`, `structuredContent`) before anything accepts it (C13's spirit: a
 * malformed answer is never believed). The value is returned as sent, so its digest is the server's.
 */
import { specTypeSchemas } from '@modelcontextprotocol/client';
import { isRecord, malformed } from './rpc-error.js';

const schema = specTypeSchemas.CallToolResult['~standard'];

/** `value` when it is a `CallToolResult` with a `content` list; else a `malformed` failure naming `what`. */
export function callToolResult(value: unknown, what: string): Record<string, unknown> {
  if (!isRecord(value) || !Array.isArray(value.content)) throw malformed(`${what} is not a CallToolResult`);
  const checked = schema.validate(value);
  // The SDK's schemas are synchronous; a promise here would be a schema this code does not know.
  if (checked instanceof Promise) throw malformed(`${what}: the CallToolResult schema is asynchronous`);
  if (checked.issues !== undefined) {
    const issue = checked.issues[0]!;
    const path = (issue.path ?? []).map((p) => (typeof p === 'object' ? String(p.key) : String(p))).join('.');
    throw malformed(`${what} is not a CallToolResult (${path === '' ? '' : `${path}: `}${issue.message})`);
  }
  return value;
}
