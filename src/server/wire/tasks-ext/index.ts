import type { WireAdapter } from '../adapter.js';
import { TASKS_EXTENSION } from './constants.js';
import { DEFAULT_LIMITS, type ServerLimits } from '../../limits.js';
import { CallerRates } from '../../rate-limit.js';
import { createListenPrecheck } from './listen.js';
import { paramHeaderPrecheck } from './param-precheck.js';
import { installTaskMethods, taskFastMethods } from './methods.js';

/**
 * The MCP Tasks extension `io.modelcontextprotocol/tasks` (SEP-2663, spec 2026-07-28), server side.
 * Owns `tools/call` on the modern era, plus `tasks/get`, `tasks/update`, `tasks/cancel` and our
 * `terminus/tasks/lookup`. Over HTTP it also serves `subscriptions/listen` streams for `taskIds`
 * (`notifications/tasks`, see `listen.ts`), which the SDK's listen router cannot (reference 5.5).
 */
export function createTasksExtensionWire(
  limits: ServerLimits = DEFAULT_LIMITS,
  rates: CallerRates = new CallerRates(limits),
): WireAdapter {
  const listen = createListenPrecheck(limits);
  return {
    name: 'mcp-tasks-ext',
    eras: ['modern'],
    extensions: { [TASKS_EXTENSION]: {} },
    install: installTaskMethods,
    fastMethods: taskFastMethods,
    // Every raw JSON-RPC request over HTTP passes here first, whatever its wire: the rate limits
    // (T-78) of tool calls and task reads are checked once for all of them.
    precheck: (message, context) =>
      rates.precheck(message, context.authInfo) ?? paramHeaderPrecheck(message, context) ?? listen(message, context),
  };
}

/** The wire with the default limits (`DEFAULT_LIMITS`). */
export const tasksExtensionWire: WireAdapter = createTasksExtensionWire();

export { LOOKUP_METHOD, SUBMISSION_KEY_META, TASKS_EXTENSION, INVALID_PARAMS_REASONS } from './constants.js';
export * as tasksExtCodec from './codec.js';
