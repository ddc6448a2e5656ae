/**
 * Picks the client wire for a server and connects it. `auto` (the default): the Tasks extension if
 * `server/discover` advertises it (2026-07-28), else the 2025-11-25 tasks if `initialize` advertises
 * `tasks.requests.tools.call`, else `WireUnavailableError`. A forced wire skips the probe of the
 * other one (the ledger stores which wire created each operation, and a resumed operation is driven
 * by that wire, whatever the server advertises now).
 */
import type { Clock } from '../../core/ports.js';
import type { WireName } from '../../core/task.js';
import type { ClientWire } from '../wire-port.js';
import { WireFailure } from '../wire-port.js';
import type { RpcConnection } from './connection.js';
import { DEFAULT_CLIENT_INFO, LEGACY_PROTOCOL_VERSION, TASKS_EXTENSION, type ClientInfo } from './envelope.js';
import { createHttpConnection } from './http-channel.js';
import { createRev20251125Wire } from './rev2025-11-25/index.js';
import { isRecord } from './rpc-error.js';
import { createStdioConnection, type StdioConnectionOptions } from './stdio-channel.js';
import { createTasksExtWire } from './tasks-ext/index.js';

/** The MCP wires this client speaks. */
export type ClientWireName = Extract<WireName, 'mcp-tasks-ext' | 'mcp-2025-11-25'>;
export type WireChoice = 'auto' | ClientWireName;

/** Where a server is: an HTTP endpoint, a command to spawn (stdio), or a ready connection. */
export type ServerTarget =
  | {
      readonly url: string;
      readonly headers?: Readonly<Record<string, string>>;
      readonly fetch?: typeof fetch;
    }
  | Omit<StdioConnectionOptions, 'clock' | 'era' | 'timeoutMs' | 'clientInfo'>
  | { readonly connection: RpcConnection };

export interface ConnectOptions {
  readonly clock: Clock;
  readonly wire?: WireChoice;
  /** Per-request timeout (ms); default 30 000. */
  readonly timeoutMs?: number;
  readonly clientInfo?: ClientInfo;
}

/** The server advertises no task wire this client speaks (or not the forced one). */
export class WireUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireUnavailableError';
  }
}

/**
 * @example
 * const wire = await connectServer({ url: 'http://127.0.0.1:3000/mcp' }, { clock: systemClock });
 * const wire2 = await connectServer({ command: 'node', args: ['dist/cli/main.js', 'serve', '--stdio'] }, { clock });
 */
export async function connectServer(target: ServerTarget, options: ConnectOptions): Promise<ClientWire> {
  const connection = await open(target, options);
  try {
    return await negotiate(connection, options);
  } catch (error) {
    await connection.close();
    throw error;
  }
}

async function open(target: ServerTarget, options: ConnectOptions): Promise<RpcConnection> {
  const common = {
    clock: options.clock,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.clientInfo === undefined ? {} : { clientInfo: options.clientInfo }),
  };
  if ('connection' in target) return target.connection;
  if ('url' in target) return createHttpConnection({ ...target, ...common });
  return createStdioConnection({ ...target, ...common });
}

/** Negotiates on an open connection and returns the adapter; the adapter's `close` closes the connection. */
export async function negotiate(connection: RpcConnection, options: ConnectOptions): Promise<ClientWire> {
  const choice = options.wire ?? 'auto';
  const close = () => connection.close();
  if (choice === 'mcp-tasks-ext') {
    connection.era = 'modern';
    return createTasksExtWire({ channel: connection.request, close });
  }
  if (choice === 'auto') {
    connection.era = 'modern';
    if (await advertisesExtension(connection)) return createTasksExtWire({ channel: connection.request, close });
  }
  connection.era = 'legacy';
  const capabilities = await initialize(connection, options.clientInfo ?? DEFAULT_CLIENT_INFO);
  if (choice === 'auto' && !legacyTaskCalls(capabilities)) {
    throw new WireUnavailableError('server advertises neither the Tasks extension nor 2025-11-25 task tool calls');
  }
  return createRev20251125Wire({
    channel: connection.request,
    onNotification: (listener) => connection.onNotification(listener),
    close,
  });
}

/** `server/discover` (2026-07-28). An error answer means a server of an older revision: false. */
async function advertisesExtension(connection: RpcConnection): Promise<boolean> {
  try {
    const result = await connection.request('server/discover', {});
    const extensions = isRecord(result.capabilities) ? result.capabilities.extensions : undefined;
    return isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]);
  } catch (error) {
    if (error instanceof WireFailure && (error.kind === 'rejected' || error.kind === 'not_found')) return false;
    throw error;
  }
}

async function initialize(connection: RpcConnection, clientInfo: ClientInfo): Promise<Record<string, unknown>> {
  const result = await connection.request('initialize', {
    protocolVersion: LEGACY_PROTOCOL_VERSION,
    capabilities: { elicitation: {} },
    clientInfo: { ...clientInfo },
  });
  connection.legacyVersion =
    typeof result.protocolVersion === 'string' ? result.protocolVersion : LEGACY_PROTOCOL_VERSION;
  await connection.notify('notifications/initialized', {});
  return isRecord(result.capabilities) ? result.capabilities : {};
}

function legacyTaskCalls(capabilities: Record<string, unknown>): boolean {
  const tasks = capabilities.tasks;
  if (!isRecord(tasks) || !isRecord(tasks.requests)) return false;
  const tools = tasks.requests.tools;
  return isRecord(tools) && isRecord(tools.call);
}
