/**
 * What the parts of the simulated network share: the series' options, the wire spoken, the server's
 * lies, each task's memory of what it was answered, the one message counter, and the fault draw
 * (which also moves `faultsOverAt`, from where the liveness bound counts).
 */
import type { ServerRequestHandler } from '../../executor/adapters/connection.js';
import type { ClockScope } from '../clock.js';
import { fireRule, type FaultClass, type MessageRule } from '../faults.js';
import type { SimRandom } from '../random.js';
import type { ServerFacts } from '../server/facts.js';
import type { SimServer } from '../server/host.js';
import type { Trace } from '../trace.js';
import type { Transport } from '../wires/spec.js';
import { tasksExtSim } from '../wires/tasks-ext.js';
import type { SimWire } from '../wires/wire.js';
import { Misbehaviour } from './misbehave.js';
import type { WireLog } from './wire-log.js';

/** Transport timeout of one request, virtual ms. */
export const REQUEST_TIMEOUT_MS = 2_000;
/**
 * Transport timeout of a 2025-11-25 `tasks/result`, which blocks until the task is terminal (T-39):
 * the executor's HTTP channel default (30 s), after which the side channel opens another.
 */
export const BLOCKING_TIMEOUT_MS = 30_000;
/** How long a server->client request waits for its reply: the SDK's default request timeout. */
export const SERVER_REQUEST_TIMEOUT_MS = 60_000;

/** How one request ended on the network, before the transport frames it for its client. */
export type Outcome =
  | { readonly kind: 'answer'; readonly body: Body }
  | { readonly kind: 'timeout' | 'unavailable' }
  | { readonly kind: 'throttled'; readonly status: number; readonly retryAfterMs: number | undefined }
  | { readonly kind: 'malformed'; readonly body: Body };

/** One client process's side of the network: its transport, whether it lives, its server-request handlers. */
export interface Link {
  readonly transport: Transport;
  readonly alive: () => boolean;
  /** Server->client request handlers the client's adapter registered on its channel (2025 side channel). */
  readonly handlers: ServerRequestHandler[];
}

/** A JSON-RPC answer as it crosses the network. */
export type Body =
  { readonly result: Record<string, unknown> } | { readonly error: { code: number; message: string; data?: unknown } };

/** What a series gives its network. */
export interface NetworkOptions {
  readonly scope: ClockScope;
  readonly random: SimRandom;
  readonly trace: Trace;
  readonly server: SimServer;
  readonly facts: ServerFacts;
  readonly rules: MessageRule[];
  readonly log: WireLog;
  readonly fired: Map<FaultClass, number>;
  /** Operations whose next `tasks/cancel` crosses the network in zero time (`cancel_complete_race`). */
  readonly instant: Set<string>;
  /** Called synchronously when a request leaves the client: the C8/C10 send-time checks (log method names). */
  readonly onSend?: (method: string, op: string | null, params: Record<string, unknown>) => void;
  /** The wire the clients speak; default the Tasks extension. */
  readonly wire?: SimWire;
}

/** What the network remembers of one task: its last answers (for replays) and its faults' state. */
export interface TaskMemory {
  last?: Body;
  lastInputRequired?: Body;
  terminalAnswers: number;
  partitionUntil: number;
  updateSent: boolean;
}

/** The network's shared state; `SimNetwork` and its parts read and move it, in the order they did as one class. */
export class NetworkState {
  readonly o: NetworkOptions;
  readonly wire: SimWire;
  /** The server's lies (C13 fault classes), told on the wires that have a shape for them; inert unless planned. */
  readonly lies: Misbehaviour | null;
  /** The last message id: requests, server requests and replies share one sequence. */
  seq = 0;
  /** See `SimNetwork.faultsOverAt`. */
  faultsOverAt = 0;
  readonly #tasks = new Map<string, TaskMemory>();

  constructor(options: NetworkOptions) {
    this.o = options;
    this.wire = options.wire ?? tasksExtSim;
    const shape = this.wire.lies;
    this.lies = shape === undefined ? null : new Misbehaviour(this.wire, shape, (fault, op) => this.fire(fault, op));
  }

  /** What the network remembers of `taskId` (created empty on first use). */
  memory(taskId: string): TaskMemory {
    let m = this.#tasks.get(taskId);
    if (m === undefined) {
      m = { terminalAnswers: 0, partitionUntil: 0, updateSent: false };
      this.#tasks.set(taskId, m);
    }
    return m;
  }

  /** The first live rule of `fault` for `op` that fires now (drawing its probability). */
  fire(fault: FaultClass, op: string | null): MessageRule | null {
    const rule = fireRule(this.o, fault, op);
    if (rule !== null) this.faultsOverAt = Math.max(this.faultsOverAt, this.o.scope.now() + REQUEST_TIMEOUT_MS);
    return rule;
  }

  /** One message's network delay, virtual ms: 1-30 ms, and 3 % of messages 100-1,500 ms. */
  latency(): number {
    const r = this.o.random;
    return r.chance(0.03) ? r.int(100, 1_500) : r.int(1, 30);
  }
}
