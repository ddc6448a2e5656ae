/**
 * What a 2026-07-28 client puts on every request (reference 1.1): `params._meta` carries the
 * protocol version, the client info and the client capabilities, and the capabilities declare the
 * Tasks extension on each request, because the per-request declaration is the only one that counts.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/client';
import { traceMeta } from './trace-context.js';

export const MODERN_PROTOCOL_VERSION = '2026-07-28';
export const LEGACY_PROTOCOL_VERSION = '2025-11-25';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Our idempotency key on `tools/call` (`_meta`), and our key lookup method (server: `tasks-ext/constants.ts`). */
export const SUBMISSION_KEY_META = 'mcp-terminus.dev/submissionKey';
export const LOOKUP_METHOD = 'terminus/tasks/lookup';
export const PROGRESS_META = 'mcp-terminus.dev/progress';
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

export interface ClientInfo {
  readonly name: string;
  readonly version: string;
}

export const DEFAULT_CLIENT_INFO: ClientInfo = { name: 'mcp-terminus-executor', version: '0.1.0' };

/** The client capabilities we declare: the Tasks extension and form elicitation (input rounds). */
export function clientCapabilities(): Record<string, unknown> {
  return { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } };
}

/** `params` with the modern envelope (and the active span's W3C trace context) merged into `params._meta` (the caller's own keys win). */
export function withEnvelope(params: Record<string, unknown>, clientInfo: ClientInfo): Record<string, unknown> {
  const own = params._meta;
  const meta = typeof own === 'object' && own !== null && !Array.isArray(own) ? own : {};
  return {
    ...params,
    _meta: {
      [PROTOCOL_VERSION_META_KEY]: MODERN_PROTOCOL_VERSION,
      [CLIENT_INFO_META_KEY]: { ...clientInfo },
      [CLIENT_CAPABILITIES_META_KEY]: clientCapabilities(),
      ...traceMeta(),
      ...meta,
    },
  };
}
