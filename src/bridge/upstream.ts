/**
 * One upstream server of the bridge: a single connection that both lists its tools and carries its
 * task wire. A stdio upstream is therefore one child process, so a synchronous tool and a task tool
 * of the same server see the same process state.
 */
import { specTypeSchemas } from '@modelcontextprotocol/client';
import type { Clock } from '../core/ports.js';
import type { WireName } from '../core/task.js';
import type { RpcConnection } from '../executor/adapters/connection.js';
import {
  connectServer,
  createHttpConnection,
  createStdioConnection,
  negotiate,
  WireUnavailableError,
  type ServerTarget,
} from '../executor/adapters/index.js';
import { credentialOf } from '../executor/identity.js';
import type { SessionBinding } from '../executor/operation.js';
import { WireFailure, type ClientWire } from '../executor/wire-port.js';

/** A tool as the upstream lists it, with how the bridge calls it. */
export interface UpstreamTool {
  /** The upstream's own name. */
  readonly name: string;
  /** The `tools/list` entry as received. */
  readonly listed: Readonly<Record<string, unknown>>;
  /** A task tool: it may run as a task (listed with the bridge's note); false: a synchronous tool. */
  readonly durable: boolean;
  /**
   * Called through the executor (every tool of an upstream with a wire, synchronous ones as plain
   * calls recorded in the ledger, so a retry attaches); false: a `tools/call` passed through as is.
   */
  readonly viaExecutor: boolean;
}

export interface UpstreamOptions {
  readonly clock: Clock;
  /** Per-request timeout toward the upstream (ms); default the adapters' 30 000. */
  readonly timeoutMs?: number;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A connection target opened once, negotiated once; `wire` is null for a server with no task wire. */
export class Upstream {
  readonly name: string;
  private readonly target: ServerTarget;
  private readonly options: UpstreamOptions;
  private opened: Promise<{ connection: RpcConnection; wire: ClientWire | null }> | null = null;
  /** Connections that continue the HTTP sessions of resumed operations, by session id. */
  private readonly kept = new Map<string, Promise<ClientWire>>();
  private closed = false;

  constructor(name: string, target: ServerTarget, options: UpstreamOptions) {
    this.name = name;
    this.target = target;
    this.options = options;
  }

  /** Connects and negotiates on first use; a failed attempt is retried by the next caller. */
  open(): Promise<{ connection: RpcConnection; wire: ClientWire | null }> {
    if (this.opened === null) {
      const opened = this.connect();
      this.opened = opened;
      opened.then(
        // A connection that ends by itself (a stdio upstream that exited) is opened again on next use:
        // the executor reconnects its operations through `wire()`, listings and plain calls follow.
        ({ connection }) =>
          connection.onClose?.(() => {
            if (this.opened === opened) this.opened = null;
          }),
        () => {
          if (this.opened === opened) this.opened = null;
        },
      );
    }
    return this.opened;
  }

  /**
   * The credential this bridge's requests to the upstream carry (its credential headers), null for
   * none (a stdio upstream, an HTTP one without them): the executor fingerprints it with each
   * operation and refuses to drive one submitted under another.
   */
  credential(): string | null {
    return 'url' in this.target ? credentialOf(this.target.headers ?? {}) : null;
  }

  private common() {
    return {
      clock: this.options.clock,
      ...(this.options.timeoutMs === undefined ? {} : { timeoutMs: this.options.timeoutMs }),
      clientInfo: { name: 'terminus-bridge', version: '0.1.0' },
    };
  }

  private async connect(): Promise<{ connection: RpcConnection; wire: ClientWire | null }> {
    const common = this.common();
    const target = this.target;
    const connection =
      'connection' in target
        ? target.connection
        : 'url' in target
          ? createHttpConnection({ ...target, ...common })
          : // A bridge killed with SIGKILL must not leave its stdio upstreams running (a target may opt out).
            await createStdioConnection({ endWithParent: true, ...target, ...common });
    try {
      // aip-151 is not an MCP tool listing: the bridge speaks the three MCP task wires.
      const wire = await negotiate(connection, { ...common, skip: ['aip-151'] });
      return { connection, wire };
    } catch (error) {
      // No task wire: every tool passes through as a plain tools/call on this connection.
      if (error instanceof WireUnavailableError) return { connection, wire: null };
      await connection.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * The wire the executor drives operations over. `wanted` (a resumed operation's) must match.
   * `session` (a resumed operation's HTTP session, 2025-11-25 or SEP-1391) is continued: on the
   * shared connection while it is that session, else on a connection of its own, since a server
   * that binds tasks to their session knows the task nowhere else.
   */
  async wire(wanted?: WireName, session?: SessionBinding): Promise<ClientWire> {
    if (session !== undefined && wanted !== undefined && 'url' in this.target) {
      const shared = await this.opened?.catch(() => null);
      if (shared?.wire?.session?.()?.id !== session.id) return this.continued(wanted, session);
    }
    const { wire } = await this.open();
    if (wire === null) throw new WireUnavailableError(`upstream ${this.name} offers no task wire`);
    if (wanted !== undefined && wanted !== wire.wire) {
      throw new WireUnavailableError(
        `upstream ${this.name} now speaks ${wire.wire}; its operation was created on ${wanted}`,
      );
    }
    return wire;
  }

  /** One connection per kept session, opened on first use; a failed attempt is retried by the next caller. */
  private continued(wanted: WireName, session: SessionBinding): Promise<ClientWire> {
    let pending = this.kept.get(session.id);
    if (pending === undefined) {
      pending = connectServer(this.target, { ...this.common(), wire: wanted, session });
      const mine = pending;
      this.kept.set(session.id, mine);
      mine.catch(() => {
        if (this.kept.get(session.id) === mine) this.kept.delete(session.id);
      });
    }
    return pending;
  }

  /**
   * Every tool, following `nextCursor` (at most 50 pages); `refused`: the entries no host would take
   * (see `unusable`), left out so that one bad entry never fails a host's whole list.
   */
  async tools(): Promise<{ tools: UpstreamTool[]; refused: RefusedTool[] }> {
    const { connection, wire } = await this.open();
    const tools: UpstreamTool[] = [];
    const refused: RefusedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
      const answer = await connection.request('tools/list', cursor === undefined ? {} : { cursor });
      for (const tool of Array.isArray(answer.tools) ? (answer.tools as unknown[]) : []) {
        const why = unusable(tool);
        if (why !== null || !isRecord(tool) || typeof tool.name !== 'string') {
          const name = isRecord(tool) && typeof tool.name === 'string' ? tool.name.slice(0, 64) : '?';
          refused.push({ name, why: why ?? 'not a tool' });
          continue;
        }
        tools.push({
          name: tool.name,
          listed: tool,
          durable: durable(wire?.wire ?? null, tool),
          viaExecutor: wire !== null,
        });
      }
      cursor = typeof answer.nextCursor === 'string' && answer.nextCursor !== '' ? answer.nextCursor : undefined;
      if (cursor === undefined) break;
    }
    return { tools, refused };
  }

  /** A plain `tools/call`, answered as the upstream answered it. Rejects `WireFailure`. */
  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const { connection } = await this.open();
    return connection.request('tools/call', { name: tool, arguments: args }, signal === undefined ? {} : { signal });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const kept = [...this.kept.values()];
    this.kept.clear();
    await Promise.allSettled(kept.map(async (wire) => (await wire).close()));
    const opened = await this.opened?.catch(() => null);
    await (opened?.wire ?? opened?.connection)?.close().catch(() => undefined);
  }
}

/**
 * Which tools go through the executor. 2025-11-25 marks task tools `execution.taskSupport`
 * (absent = forbidden); SEP-1391 marks them `invocationMode: "async"`; the Tasks extension lists no
 * marker (the server decides per call), so every tool of such an upstream goes through the executor
 * and a synchronous answer comes back as it is.
 */
function durable(wire: WireName | null, tool: Record<string, unknown>): boolean {
  if (wire === null) return false;
  if (wire === 'mcp-2025-11-25') {
    const support = isRecord(tool.execution) ? tool.execution.taskSupport : undefined;
    return support === 'optional' || support === 'required';
  }
  if (wire === 'sep-1391') return tool.invocationMode === 'async';
  return true;
}

/** A listed entry the bridge does not offer, and why. */
export interface RefusedTool {
  readonly name: string;
  readonly why: string;
}

const TOOL_SCHEMA = specTypeSchemas.Tool['~standard'];

/**
 * Why a `tools/list` entry cannot be offered to a host, or null: it must pass the MCP SDK's own
 * `Tool` schema (an SDK host validates the whole list and rejects it for one bad entry), and its
 * name must be 1-128 characters without spaces or control characters (a model calls it by name).
 */
export function unusable(tool: unknown): string | null {
  const checked = TOOL_SCHEMA.validate(tool);
  if (checked instanceof Promise) return 'the Tool schema is asynchronous';
  if (checked.issues !== undefined) {
    const issue = checked.issues[0]!;
    const path = (issue.path ?? []).map((p) => (typeof p === 'object' ? String(p.key) : String(p))).join('.');
    return `not a Tool (${path === '' ? '' : `${path}: `}${issue.message})`;
  }
  const name = (tool as { name: string }).name;
  if (!/^[^\s\p{Cc}]{1,128}$/u.test(name)) return 'its name is empty, longer than 128 characters, or has spaces';
  return null;
}

/** A wire failure the host should see as a JSON-RPC error: its code and message, when it had one. */
export function rpcErrorOf(error: unknown): { code: number; message: string } | null {
  if (error instanceof WireFailure && error.kind === 'rejected' && error.rpcCode !== undefined) {
    return { code: error.rpcCode, message: error.message };
  }
  return null;
}
