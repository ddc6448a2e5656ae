/**
 * The one place the bridge reaches into the SDK's private state. A 2025-11-25 `initialize` answer
 * advertises the server's capabilities as fixed before connecting, and the SDK (2.4) has no public
 * way to answer one host with fewer capabilities than another (`registerCapabilities` throws once
 * connected). The bridge offers `tasks` only to a host that declared its own, so it takes the
 * SDK's own answer (`Server._oninitialize`, which also records the host's capabilities and the
 * negotiated version) and trims it. `test/bridge/sdk-initialize.test.ts` fails, naming this file,
 * when an SDK update renames or removes that method; until then a missing method is logged and the
 * answer is left untrimmed (every 2025 host is then offered `tasks`, as with `--front tasks`).
 */
import type { Server } from '@modelcontextprotocol/server';
import type { Logger } from '../core/ports.js';

/** The SDK method the bridge wraps; named once, for the test and the warning. */
export const SDK_INITIALIZE_METHOD = '_oninitialize';

type Initialize = (request: unknown) => Promise<Record<string, unknown>>;

/** The SDK's own `initialize` handler of `server`, or null when this SDK has none by that name. */
export function sdkInitialize(server: Server): Initialize | null {
  const method = (server as unknown as Record<string, unknown>)[SDK_INITIALIZE_METHOD];
  return typeof method === 'function' ? (method as Initialize).bind(server) : null;
}

/**
 * Answers `initialize` with the SDK's own answer, minus the capabilities `trim` names for that
 * request. Returns false (and warns) when the SDK method is missing: the answer is then the SDK's.
 */
export function trimInitializeAnswer(
  server: Server,
  trim: (params: { readonly capabilities: Record<string, unknown> }) => readonly string[],
  logger: Logger,
): boolean {
  const initialize = sdkInitialize(server);
  if (initialize === null) {
    logger.warn('SDK has no Server._oninitialize: the initialize answer is not trimmed per host', {
      file: 'src/bridge/sdk-initialize.ts',
    });
    return false;
  }
  server.setRequestHandler('initialize', async (request) => {
    const answer = await initialize(request);
    const drop = trim(request.params);
    if (drop.length === 0) return answer as never;
    const capabilities = { ...(answer.capabilities as Record<string, unknown>) };
    for (const name of drop) delete capabilities[name];
    return { ...answer, capabilities } as never;
  });
  return true;
}
