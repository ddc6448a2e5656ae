import { TerminusError } from '../../core/errors.js';
import { WIRES, type WireName } from '../../core/task.js';
import type { TaskEngine } from '../../runner/engine-port.js';
import type { WireAdapter } from './adapter.js';
import { aip151Wire } from './aip-151/index.js';
import { createRev20251125Wire } from './rev2025-11-25/index.js';
import { sep1391ToolExtension, sep1391Wire } from './sep-1391/index.js';
import { resolveLimits, type ServerLimits } from '../limits.js';
import { CallerRates } from '../rate-limit.js';
import { createTasksExtensionWire } from './tasks-ext/index.js';

/**
 * The wire adapters of one server, registered by the protocol versions they serve, and which of them
 * take new submissions (seed `002`: an adapter can be disabled for new operations while it keeps
 * answering status, result, cancel and list for the operations created under it).
 */
export interface WireRegistration {
  readonly wire: WireName;
  /**
   * Protocol versions the wire is served under: MCP revisions for the MCP wires (SEP-1391 on a
   * 2025-era connection that declares the feature flag), the API version for AIP-151.
   */
  readonly protocolVersions: readonly string[];
  readonly adapter: WireAdapter;
  readonly enabled: boolean;
}

export interface WireRegistry {
  readonly registrations: readonly WireRegistration[];
  /** Every adapter, disabled ones included: they keep serving their existing tasks. */
  readonly adapters: readonly WireAdapter[];
  forProtocolVersion(version: string): readonly WireRegistration[];
  isEnabled(wire: WireName): boolean;
  /**
   * The engine every adapter must be given: `submit` on a disabled wire rejects `wire_disabled`
   * (each wire maps it to its own error) before anything is written; every other command passes.
   */
  guard(engine: TaskEngine): TaskEngine;
}

export interface WireRegistryOptions {
  /** Wires that refuse new submissions (`terminus serve --disable-wire`). */
  readonly disabled?: readonly WireName[];
  /** Idle timeout of 2025-era HTTP sessions (see `createLegacySessionLeg`); default 1 h. */
  readonly sessionIdleMs?: number;
  /** Sessions, listen streams, rates: see `ServerLimits`; defaults `DEFAULT_LIMITS`. */
  readonly limits?: Partial<ServerLimits>;
}

/**
 * Parses a `--disable-wire` value; throws a RangeError naming the valid wires.
 * @example
 * const wire = parseWireName('sep-1391'); // 'sep-1391'
 * const registry = createWireRegistry({ disabled: [wire] });
 * parseWireName('grpc'); // throws RangeError: unknown wire "grpc"; one of: mcp-tasks-ext, ...
 */
export function parseWireName(value: string): WireName {
  if ((WIRES as readonly string[]).includes(value)) return value as WireName;
  throw new RangeError(`unknown wire "${value}"; one of: ${WIRES.join(', ')}`);
}

/**
 * @example
 * const registry = createWireRegistry({ disabled: ['sep-1391'] });
 * const server = createTerminusServer({ engine: registry.guard(engine), wires: registry.adapters });
 */
export function createWireRegistry(options: WireRegistryOptions = {}): WireRegistry {
  const disabled = new Set(options.disabled ?? []);
  const limits = resolveLimits(options.limits);
  const rates = new CallerRates(limits);
  const table: readonly (readonly [WireAdapter, readonly string[]])[] = [
    [createTasksExtensionWire(limits, rates), ['2026-07-28']],
    // SEP-1391 shares the 2025 era's tools/call and tools/list through the 2025 wire's extension hook.
    [
      createRev20251125Wire({
        extensions: [sep1391ToolExtension],
        ...(options.sessionIdleMs === undefined ? {} : { sessionIdleMs: options.sessionIdleMs }),
        maxSessions: limits.maxSessions,
        maxSessionsPerCaller: limits.maxSessionsPerCaller,
      }),
      ['2025-11-25'],
    ],
    [sep1391Wire, ['2025-06-18', '2025-11-25']],
    [
      { ...aip151Wire, routes: (deps) => rates.guardRoutes(aip151Wire.routes?.(deps) ?? []) },
      ['google.longrunning/v1'],
    ],
  ];
  const registrations = table.map(([adapter, protocolVersions]) => ({
    wire: adapter.name,
    protocolVersions,
    adapter,
    enabled: !disabled.has(adapter.name),
  }));
  return {
    registrations,
    adapters: registrations.map((r) => r.adapter),
    forProtocolVersion: (version) => registrations.filter((r) => r.protocolVersions.includes(version)),
    isEnabled: (wire) => !disabled.has(wire),
    guard: (engine) => guardSubmissions(engine, disabled),
  };
}

function guardSubmissions(engine: TaskEngine, disabled: ReadonlySet<WireName>): TaskEngine {
  if (disabled.size === 0) return engine;
  return {
    tools: engine.tools,
    events: engine.events,
    submit: (command) => {
      if (disabled.has(command.wire)) {
        return Promise.reject(
          new TerminusError(
            'wire_disabled',
            `The ${command.wire} wire is disabled for new submissions on this server; status, result, cancel and ` +
              `list still work for the tasks created under it. Submit through another wire.`,
            { details: { wire: command.wire } },
          ),
        );
      }
      return engine.submit(command);
    },
    runInline: (command) => engine.runInline(command),
    get: (owner, id) => engine.get(owner, id),
    cancel: (owner, id) => engine.cancel(owner, id),
    respond: (owner, id, responses) => engine.respond(owner, id, responses),
    list: (owner, query) => engine.list(owner, query),
    listAllOwners: (query) => engine.listAllOwners(query),
    lookupKey: (owner, key) => engine.lookupKey(owner, key),
    readLog: (owner, id, query) => engine.readLog(owner, id, query),
    readEvents: (owner, id, query) => engine.readEvents(owner, id, query),
    waitForChange: (owner, id, opts) => engine.waitForChange(owner, id, opts),
    start: () => engine.start(),
    stop: () => engine.stop(),
  };
}
