/**
 * One wire as the simulation drives it: its spec (`spec.ts`), how the network reads its messages,
 * and how a simulated executor process builds the real client adapter for it.
 */
import type { Clock } from '../../core/ports.js';
import type { NotificationListener } from '../../executor/adapters/connection.js';
import type { TaskListener } from '../../executor/adapters/task-listener.js';
import type { ClientWire, RpcChannel } from '../../executor/wire-port.js';
import type { LieShape } from './lies.js';
import type { AnswerFields, Classified, Role, SimWireSpec } from './spec.js';

/** What the network offers one client process, to build its adapter on. */
export interface ClientLinks {
  /** JSON-RPC over the faulty network, in the wire's era. */
  readonly channel: RpcChannel;
  /** JSON-RPC to the modern-era endpoint of the same server (AIP-151's key lookup). */
  readonly modern: RpcChannel;
  /** HTTP over the faulty network (AIP-151). */
  readonly fetch: typeof fetch;
  readonly clock: Clock;
  /** `execution.taskSupport` by tool, as the server's `tools/list` shows it (2025-11-25, T-09). */
  readonly taskSupport: ReadonlyMap<string, string>;
  /** The process's push stream, on a wire with `pushes` and listening on: empty otherwise. */
  readonly push: {
    readonly onNotification?: (listener: NotificationListener) => () => void;
    readonly listener?: TaskListener;
  };
}

export interface SimWire extends SimWireSpec {
  /** What one request is; `resolve` maps a SEP-1391 token (task id or key) to the server task id. */
  classify(method: string, params: Record<string, unknown>, resolve: (token: string) => string | undefined): Classified;
  /** The same request naming `taskId` instead (task id misuse, 404 before expiry, S8 probes). */
  retarget(
    method: string,
    params: Record<string, unknown>,
    taskId: string,
  ): { method: string; params: Record<string, unknown> };
  /** Log fields of a successful answer, decoded with the client adapter's own codec. */
  answer(role: Role, method: string, params: Record<string, unknown>, result: Record<string, unknown>): AnswerFields;
  /** Log fields of an error answer that delivers a terminal payload (2025-11-25 `tasks/result`). */
  errorAnswer?(role: Role, error: { code: number; message: string; data?: unknown }): AnswerFields | null;
  /** Input keys a request answers (`tasks/update`). */
  inputKeys?(method: string, params: Record<string, unknown>): readonly string[] | undefined;
  /** How this wire's server tells the lies of C13 when they are planned; absent: it tells none. */
  readonly lies?: LieShape;
  /** The real client adapter of this wire over the process's links (the default: Tasks extension). */
  client?(links: ClientLinks): ClientWire;
}
