import { CLIENT_CAPABILITIES_META_KEY } from '@modelcontextprotocol/server';
import { TASKS_EXTENSION } from './constants.js';
import { tasksCapabilityRequired } from './errors.js';

/** What the gate reads of a request: the SDK's `ServerContext` and the fast path's both carry it. */
type EnvelopeCarrier = { readonly mcpReq: { readonly envelope?: unknown } };

/**
 * Whether this request declares the Tasks extension in its own `_meta` client capabilities. The
 * per-request declaration is the only one that counts: a legacy (2025) request has no
 * envelope and so never declares it.
 */
export function declaresTasks(ctx: EnvelopeCarrier): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  const declared = capabilities?.extensions?.[TASKS_EXTENSION];
  return declared !== undefined && declared !== null && typeof declared === 'object';
}

/**
 * The first thing every task method does: `-32021` before anything else, so a non-declaring
 * request never learns whether an id exists (X-47; the suite's `gate-test` id must get `-32021`).
 */
export function requireTasks(ctx: EnvelopeCarrier, method: string): void {
  if (!declaresTasks(ctx)) {
    throw tasksCapabilityRequired(`${method} needs the ${TASKS_EXTENSION} extension declared on the request`);
  }
}
