/**
 * `mcp-terminus/wires`: the server side of the four wires. The adapters (`tasksExtensionWire`,
 * `createRev20251125Wire`, `sep1391Wire`, `aip151Wire`) that `createTerminus` and
 * `createTerminusServer` take in `wires`, the registry that enables and disables them by name, each
 * wire's protocol constants, and the commands and owners of the engine port they all talk to
 * (`TaskEngine`), for code that drives an engine directly.
 * @packageDocumentation
 * @module mcp-terminus/wires
 */
export { createWireRegistry, parseWireName } from './server/wire/registry.js';
export type { WireRegistry, WireRegistration, WireRegistryOptions } from './server/wire/registry.js';
export { WIRES } from './core/task.js';
export type {
  WireAdapter,
  WireDeps,
  Era,
  LegacyHttpLeg,
  PrecheckContext,
  RawRpcMessage,
} from './server/wire/adapter.js';
export type { FastMethod, FastContext, LegacyFastLeg } from './server/http/fast-path.js';
export type { ListedIcon } from './server/tools-list.js';
export {
  tasksExtensionWire,
  LOOKUP_METHOD,
  SUBMISSION_KEY_META,
  TASKS_EXTENSION,
} from './server/wire/tasks-ext/index.js';
export { createRev20251125Wire } from './server/wire/rev2025-11-25/index.js';
export type { Rev20251125Options, LegacyToolExtension, LegacyListedTool } from './server/wire/rev2025-11-25/index.js';
export { sep1391Wire, sep1391ToolExtension, SEP1391_CAPABILITY } from './server/wire/sep-1391/index.js';
export { aip151Wire } from './server/wire/aip-151/index.js';
export { UNAVAILABLE_RPC_CODE } from './server/wire/retryable.js';
export { MIN_ANONYMOUS_KEY_BITS, keyBits } from './server/anonymous.js';

// Task logs on the wire: `terminus/tasks/logs`, its notification and the listen key.
export { LOGS_METHOD, LOGS_NOTIFICATION, LISTEN_LOGS_KEY } from './server/task-logs.js';
export type { WireLogLine, WireLogPage } from './server/task-logs.js';

// The commands and answers of the engine port (`TaskEngine`, in the root) every wire talks to, and
// the owners tasks are bound to.
export type {
  SubmitCommand,
  InlineCommand,
  InlineOutcome,
  WaitOptions,
  LogReadQuery,
  TaskLogPage,
} from './runner/engine-port.js';
export type { CreateOutcome, CancelOutcome, KeyLookup, ListQuery, TaskPage } from './store/port.js';
export { LOG_STREAMS } from './core/log.js';
export type { LogLine, LogStream } from './core/log.js';
export { ANONYMOUS_OWNER, STDIO_OWNER, ownerOf, jwtPrincipal, tokenPrincipal, PRINCIPAL_KEY } from './server/owner.js';
export type { OwnerFacts, TransportKind } from './server/owner.js';
// Owner names that predate their auth source (`auth:<id>`), handed to the source that made them.
export { adoptLegacyOwners } from './server/auth/index.js';
export type { LegacyOwnerReport } from './server/auth/index.js';

// The parts of a preflight's call and answer (the `Preflight` type itself is in the root).
export type {
  PreflightAnswer,
  PreflightCapabilities,
  PreflightForm,
  PreflightRoots,
  PreflightSampling,
} from './server/preflight.js';
export type { CallWebhook } from './runner/webhooks.js';
export type { PreflightStateSeal } from './server/preflight-state.js';
export type { EventReadQuery, TaskEventPage } from './runner/engine-port.js';
export type { RouteHeaders } from './server/http/routes.js';
export type { TargetPolicy } from './webhooks/policy.js';
