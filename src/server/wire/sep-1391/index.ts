import type { WireAdapter } from '../adapter.js';
import type { LegacyToolExtension } from '../rev2025-11-25/index.js';
import { installAsyncMethods } from './methods.js';
import { callAsync, claims } from './tool-call.js';
import { projectTools } from './tools.js';

/**
 * SEP-1391 async tools (reference section 2), server side, on 2025-era connections: the
 * `tools/async/*` methods here, and the shared `tools/call` / `tools/list` through the 2025 wire's
 * extension hook (`sep1391ToolExtension`, wired by the registry).
 */
export const sep1391Wire: WireAdapter = {
  name: 'sep-1391',
  eras: ['legacy'],
  install: installAsyncMethods,
};

export const sep1391ToolExtension: LegacyToolExtension = {
  projectTools,
  // `claims` refuses every call that carries `task`: those stay with the 2025 wire.
  leavesTaskCalls: true,
  callTool: (request, ctx, server, deps) =>
    claims(request, server, deps) ? callAsync(request, ctx, server, deps) : undefined,
};

export { CANCEL_METHOD, EVENTS_METHOD, RESULT_METHOD, SEP1391_CAPABILITY, STATUS_METHOD } from './constants.js';
export * as sep1391Codec from './codec.js';
