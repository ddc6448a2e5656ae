import type { WireAdapter } from '../adapter.js';
import { TASKS_EXTENSION } from './constants.js';
import { listenPrecheck } from './listen.js';
import { installTaskMethods } from './methods.js';

/**
 * The MCP Tasks extension `io.modelcontextprotocol/tasks` (SEP-2663, spec 2026-07-28), server side.
 * Owns `tools/call` on the modern era, plus `tasks/get`, `tasks/update`, `tasks/cancel` and our
 * `terminus/tasks/lookup`. Over HTTP it also serves `subscriptions/listen` streams for `taskIds`
 * (`notifications/tasks`, see `listen.ts`), which the SDK's listen router cannot (reference 5.5).
 */
export const tasksExtensionWire: WireAdapter = {
  name: 'mcp-tasks-ext',
  eras: ['modern'],
  extensions: { [TASKS_EXTENSION]: {} },
  install: installTaskMethods,
  precheck: listenPrecheck,
};

export { LOOKUP_METHOD, SUBMISSION_KEY_META, TASKS_EXTENSION, INVALID_PARAMS_REASONS } from './constants.js';
export * as tasksExtCodec from './codec.js';
