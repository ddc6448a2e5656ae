import type { WireAdapter } from '../adapter.js';
import { TASKS_EXTENSION } from './constants.js';
import type { ServerLimits } from '../../limits.js';
import { createListenPrecheck } from './listen.js';
import { installTaskMethods } from './methods.js';

/**
 * The MCP Tasks extension `io.modelcontextprotocol/tasks` (SEP-2663, spec 2026-07-28), server side.
 * Owns `tools/call` on the modern era, plus `tasks/get`, `tasks/update`, `tasks/cancel` and our
 * `terminus/tasks/lookup`. Over HTTP it also serves `subscriptions/listen` streams for `taskIds`
 * (`notifications/tasks`, see `listen.ts`), which the SDK's listen router cannot (reference 5.5).
 */
export function createTasksExtensionWire(
  limits?: Pick<ServerLimits, 'maxListenStreams' | 'maxListenStreamsPerCaller'>,
): WireAdapter {
  return {
    name: 'mcp-tasks-ext',
    eras: ['modern'],
    extensions: { [TASKS_EXTENSION]: {} },
    install: installTaskMethods,
    precheck: createListenPrecheck(limits),
  };
}

/** The wire with the default limits (`DEFAULT_LIMITS`). */
export const tasksExtensionWire: WireAdapter = createTasksExtensionWire();

export { LOOKUP_METHOD, SUBMISSION_KEY_META, TASKS_EXTENSION, INVALID_PARAMS_REASONS } from './constants.js';
export * as tasksExtCodec from './codec.js';
