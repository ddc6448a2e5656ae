import { ProtocolError, type Server } from '@modelcontextprotocol/server';
import type { FastMethod } from '../../http/fast-path.js';
import type { WireAdapter, WireDeps } from '../adapter.js';
import type { LegacyToolExtension } from './extension.js';
import { installTaskMethods, legacyFastMethods } from './methods.js';
import { createLegacySessionLeg } from './session.js';
import { callToolLegacy, legacyFastToolCall } from './tool-call.js';
import { listLegacyTools } from './tools-list.js';

/**
 * The experimental tasks of MCP 2025-11-25 (reference section 1), server side, on legacy-era
 * servers: `capabilities.tasks` (T-01), `tools/list` with `execution.taskSupport`, task-augmented
 * `tools/call`, `tasks/get|result|list|cancel`. `tasks.list` is added per caller by whoever knows
 * the caller before `initialize` (the sessionful leg, stdio), T-77.
 *
 * `extensions` (SEP-1391) share the era's `tools/call` and `tools/list` and see each request first.
 */
export interface Rev20251125Options {
  readonly extensions?: readonly LegacyToolExtension[];
  /** Idle timeout of the sessionful HTTP leg's sessions; default 1 h. */
  readonly sessionIdleMs?: number;
  /** Open sessions of the sessionful HTTP leg at once; default 1000. */
  readonly maxSessions?: number;
  /** Open sessions of one caller (principal, or `anonymous`); default 100, or a tenth of `maxSessions`. */
  readonly maxSessionsPerCaller?: number;
}

/**
 * The 2025-11-25 server wire (exported by the package as `createRev20251125ServerWire`).
 * @example
 * const wire = createRev20251125ServerWire({ extensions: [sep1391ToolExtension], sessionIdleMs: 600_000 });
 * const server = createTerminusServer({ engine, wires: [wire, sep1391Wire] });
 */
export function createRev20251125Wire(options: Rev20251125Options = {}): WireAdapter {
  const extensions = options.extensions ?? [];
  // Task-augmented `tools/call` on the fast path only when no extension could claim such a call.
  const fastToolCalls = extensions.every((extension) => extension.leavesTaskCalls === true);
  const fastMethods = (deps: WireDeps): ReadonlyMap<string, FastMethod> =>
    new Map<string, FastMethod>([
      ...legacyFastMethods(deps),
      ...(fastToolCalls ? [['tools/call', legacyFastToolCall(deps)] as const] : []),
    ]);
  return {
    name: 'mcp-2025-11-25',
    eras: ['legacy'],
    install(server: Server, deps: WireDeps) {
      server.registerCapabilities({
        tasks: {
          cancel: {},
          requests: { tools: { call: {} } },
          ...(deps.transport === 'stdio' ? { list: {} } : {}),
        },
      });
      server.setRequestHandler('tools/list', (_request, ctx) => {
        let tools = listLegacyTools(deps.engine.tools);
        for (const extension of extensions) tools = extension.projectTools?.(tools, server, ctx) ?? tools;
        return { tools };
      });
      // The nested `{ task }` result only passes the unvalidated fallback path (reference 5.7).
      server.removeRequestHandler('tools/call');
      const previous = server.fallbackRequestHandler;
      server.fallbackRequestHandler = async (request, ctx) => {
        if (request.method !== 'tools/call') {
          if (previous !== undefined) return previous(request, ctx);
          throw new ProtocolError(-32601, `Method not found: ${request.method}`);
        }
        for (const extension of extensions) {
          const answer = extension.callTool?.(request, ctx, server, deps);
          if (answer !== undefined) return await answer;
        }
        return await callToolLegacy(request, ctx, server, deps);
      };
      installTaskMethods(server, deps);
    },
    legacyFastMethods: fastMethods,
    legacyHttp: (factory, deps) =>
      createLegacySessionLeg({
        factory,
        engine: deps.engine,
        logger: deps.logger,
        canList: (authInfo) => typeof authInfo?.clientId === 'string' && authInfo.clientId.length > 0,
        fastMethods: fastMethods(deps),
        ...(options.sessionIdleMs === undefined ? {} : { idleMs: options.sessionIdleMs }),
        ...(options.maxSessions === undefined ? {} : { maxSessions: options.maxSessions }),
        ...(options.maxSessionsPerCaller === undefined ? {} : { maxSessionsPerCaller: options.maxSessionsPerCaller }),
      }),
  };
}

export { createLegacySessionLeg, type LegacySessionLeg } from './session.js';
export type { LegacyListedTool, LegacyToolExtension } from './extension.js';
export { RELATED_TASK_META, REASONS as REV_2025_REASONS } from './constants.js';
export * as rev20251125Codec from './codec.js';
