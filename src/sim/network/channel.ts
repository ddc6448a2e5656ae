/**
 * Failures follow the channel contract of `executor/adapters` (as `http-channel.ts` does): no answer
 * (timeout, connection refused) is `WireFailure('lost')`, 429/503 is `throttled` with Retry-After, a
 * cut body is `malformed`, and a JSON-RPC error answer is `RpcErrorFailure`.
 *
 * The in-process network between the executor and the simulated server: an `RpcChannel` that
 * delays every message (network stream), and applies the series' fault rules: loses requests or
 * responses, duplicates requests, answers with an older snapshot, truncates bodies, throttles with
 * 429/503 + Retry-After, misroutes task ids, partitions one task, all in virtual time.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import { canonicalJson } from '../../core/digest.js';
import { isTerminal } from '../../core/task.js';
import {
  dispatchServerRequest,
  registerRequestHook,
  type ServerRequestHandler,
  type ServerRequestReply,
} from '../../executor/adapters/connection.js';
import { RpcErrorFailure } from '../../executor/adapters/rpc-error.js';
import { WireFailure, type RpcChannel } from '../../executor/wire-port.js';
import type { ClockScope } from '../clock.js';
import { fireRule, type FaultClass, type MessageRule } from '../faults.js';
import type { SimRandom } from '../random.js';
import { ServerDown, type LegacyLink, type SimServer } from '../server/host.js';
import type { ServerFacts } from '../server/facts.js';
import type { Trace } from '../trace.js';
import { httpMethod } from '../wires/aip151.js';
import { normalizeResult } from '../wires/payload.js';
import { LOG_METHOD, type Role, type Transport } from '../wires/spec.js';
import { tasksExtSim } from '../wires/tasks-ext.js';
import type { SimWire } from '../wires/wire.js';
import type { WireEvent, WireLog } from './wire-log.js';
import { HELD_READ_MS, Misbehaviour, type Asked } from './misbehave.js';
import { LOOKUP_METHOD } from '../../executor/adapters/envelope.js';

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
type Outcome =
  | { readonly kind: 'answer'; readonly body: Body }
  | { readonly kind: 'timeout' | 'unavailable' }
  | { readonly kind: 'throttled'; readonly status: number; readonly retryAfterMs: number | undefined }
  | { readonly kind: 'malformed'; readonly body: Body };

interface Link {
  readonly transport: Transport;
  readonly alive: () => boolean;
  /** Server->client request handlers the client's adapter registered on its channel (2025 side channel). */
  readonly handlers: ServerRequestHandler[];
}

type Body =
  { readonly result: Record<string, unknown> } | { readonly error: { code: number; message: string; data?: unknown } };

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

interface TaskMemory {
  last?: Body;
  lastInputRequired?: Body;
  terminalAnswers: number;
  partitionUntil: number;
  updateSent: boolean;
}

export class SimNetwork {
  readonly #o: NetworkOptions;
  #seq = 0;
  readonly #tasks = new Map<string, TaskMemory>();
  readonly #keyOps = new Map<string, string>();
  readonly #wire: SimWire;
  readonly #serverRequests = new Set<() => void>();
  /** The server's lies (C13 fault classes), told on the wires that have a shape for them; inert unless planned. */
  readonly #lies: Misbehaviour | null;
  #faultsOverAt = 0;

  constructor(options: NetworkOptions) {
    this.#o = options;
    this.#wire = options.wire ?? tasksExtSim;
    const shape = this.#wire.lies;
    this.#lies = shape === undefined ? null : new Misbehaviour(this.#wire, shape, (fault, op) => this.#fire(fault, op));
  }

  /** The wire spoken (and how its messages read). */
  get wire(): SimWire {
    return this.#wire;
  }

  /**
   * The channel of one client process acting as `principal`. Once `alive()` is false (the process
   * crashed) nothing is sent and no answer is delivered: its promises never settle. `transport`
   * picks the server endpoint (default: the wire's own era); server requests sent on its requests'
   * streams reach the handlers the adapter registers through the connection's request hook.
   */
  channel(principal: string, alive: () => boolean = () => true, transport?: 'modern' | 'legacy'): RpcChannel {
    const link: Link = {
      transport: transport ?? (this.#wire.transport === 'legacy' ? 'legacy' : 'modern'),
      alive,
      handlers: [],
    };
    const channel: RpcChannel = (method, params, options) => {
      if (!alive()) return new Promise(() => {});
      return new Promise((resolve, reject) => {
        this.#call(principal, method, params, options?.signal, link).then(
          (outcome) => {
            if (!alive()) return;
            if (outcome.kind === 'answer') {
              const body = outcome.body;
              if ('error' in body) reject(new RpcErrorFailure(body.error.code, body.error.message, body.error.data));
              else resolve(body.result);
            } else if (outcome.kind === 'throttled') {
              const { status, retryAfterMs } = outcome;
              reject(new WireFailure('throttled', `HTTP ${status}`, { httpStatus: status, retryAfterMs }));
            } else if (outcome.kind === 'malformed') {
              reject(new WireFailure('malformed', 'response body cut short'));
            } else {
              reject(new WireFailure('lost', outcome.kind === 'timeout' ? 'request timed out' : 'connection refused'));
            }
          },
          (error: unknown) => alive() && reject(error as Error),
        );
      });
    };
    registerRequestHook(channel, (handler) => {
      link.handlers.push(handler);
      return () => void link.handlers.splice(link.handlers.indexOf(handler), 1);
    });
    return channel;
  }

  /**
   * HTTP of one client process (AIP-151): a `fetch` whose requests cross the same faulty network.
   * No answer rejects as a dropped connection; 429/503 carry `Retry-After` in seconds; a cut body is
   * a 200 whose JSON does not parse.
   */
  fetch(principal: string, alive: () => boolean = () => true): typeof fetch {
    const link: Link = { transport: 'http', alive, handlers: [] };
    return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      if (!alive()) return new Promise(() => {});
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      const verb = (init?.method ?? 'GET').toUpperCase();
      const text = typeof init?.body === 'string' ? init.body : undefined;
      const params = text === undefined ? {} : (JSON.parse(text) as Record<string, unknown>);
      const signal = init?.signal ?? undefined;
      const outcome = await this.#call(principal, httpMethod(verb, url.pathname + url.search), params, signal, link);
      if (!alive()) return new Promise(() => {});
      const json = (status: number, body: unknown): Response =>
        new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
      switch (outcome.kind) {
        case 'answer':
          return 'error' in outcome.body
            ? json(outcome.body.error.code, outcome.body.error.data ?? {})
            : json(200, outcome.body.result);
        case 'throttled':
          return new Response('', {
            status: outcome.status,
            headers: outcome.retryAfterMs === undefined ? {} : { 'retry-after': String(outcome.retryAfterMs / 1000) },
          });
        case 'malformed': {
          const whole = JSON.stringify('result' in outcome.body ? outcome.body.result : outcome.body.error.data);
          return new Response(whole.slice(0, Math.max(1, Math.floor(whole.length / 2))), { status: 200 });
        }
        default:
          throw new TypeError(outcome.kind === 'timeout' ? 'request timed out' : 'fetch failed');
      }
    };
  }

  /** Server requests still waiting for the client: failed when their server process dies or the series ends. */
  failServerRequests(): void {
    for (const fail of [...this.#serverRequests]) fail();
  }

  #memory(taskId: string): TaskMemory {
    let m = this.#tasks.get(taskId);
    if (m === undefined) {
      m = { terminalAnswers: 0, partitionUntil: 0, updateSent: false };
      this.#tasks.set(taskId, m);
    }
    return m;
  }

  /** The request's role, the task it names and the call node it serves. */
  #read(method: string, params: Record<string, unknown>): { role: Role; op: string | null; taskId?: string } {
    const { facts } = this.#o;
    const c = this.#wire.classify(method, params, (token) => {
      if (facts.tasks.has(token)) return token;
      for (const [id, meta] of facts.tasks) if (meta.key === token) return id;
      return undefined;
    });
    const base = c.taskId === undefined ? { role: c.role } : { role: c.role, taskId: c.taskId };
    if (c.role === 'submit') {
      const op = c.op ?? null;
      if (op !== null && c.key !== undefined) this.#keyOps.set(c.key, op);
      return { ...base, op };
    }
    if (c.taskId !== undefined) {
      const node = facts.tasks.get(c.taskId)?.callNode;
      if (node !== undefined) return { ...base, op: node };
    }
    if (c.key !== undefined) return { ...base, op: this.#keyOps.get(c.key) ?? null };
    return { ...base, op: null };
  }

  /**
   * When the last message fault that fired was over, virtual ms: the request it hit timed out (or
   * was answered), an expiry partition ended. The liveness bound counts from here too.
   */
  get faultsOverAt(): number {
    return this.#faultsOverAt;
  }

  /** The first live rule of `fault` for `op` that fires now (drawing its probability). */
  #fire(fault: FaultClass, op: string | null): MessageRule | null {
    const rule = fireRule(this.#o, fault, op);
    if (rule !== null) this.#faultsOverAt = Math.max(this.#faultsOverAt, this.#o.scope.now() + REQUEST_TIMEOUT_MS);
    return rule;
  }

  #latency(): number {
    const r = this.#o.random;
    return r.chance(0.03) ? r.int(100, 1_500) : r.int(1, 30);
  }

  #call(
    principal: string,
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal | undefined,
    link: Link,
  ): Promise<Outcome> {
    const { scope, trace, log } = this.#o;
    const alive = link.alive;
    const id = ++this.#seq;
    const { role, op, taskId } = this.#read(method, params);
    const asked: Asked = { role, method, params, op, taskId };
    const logMethod = role === 'other' ? method : LOG_METHOD[role];
    trace.add('net', `#${id} ${method} ${op ?? '-'}`);
    const keys = this.#wire.inputKeys?.(method, params);
    log.add({
      at: scope.now(),
      id,
      op,
      method: logMethod,
      kind: 'send',
      ...(taskId === undefined ? {} : { taskId }),
      ...(keys === undefined ? {} : { keys }),
    });
    this.#o.onSend?.(logMethod, op, params);
    this.#lies?.sent(role, op);
    const sentAt = scope.now();
    if (role === 'input' && taskId !== undefined) this.#memory(taskId).updateSent = true;

    return new Promise((resolve) => {
      let settled = false;
      // The server's view of this request's stream: closed when the client gives up on it.
      const stream = new AbortController();
      const onAbort = (): void => done(() => resolve({ kind: 'timeout' }));
      const done = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        timeout.cancel();
        signal?.removeEventListener('abort', onAbort);
        stream.abort();
        fn();
      };
      const fail = (
        outcome: Exclude<Outcome, { kind: 'answer' }>,
        kind: 'timeout' | 'unavailable' | 'throttled' | 'malformed',
        extra = {},
      ): void =>
        done(() => {
          // Only what a live process received is logged: an answer that reaches a crashed executor
          // binds nobody (a Retry-After it carried was never seen by the next incarnation).
          if (alive()) {
            log.add({
              at: scope.now(),
              id,
              op,
              method: logMethod,
              kind,
              ...(taskId === undefined ? {} : { taskId }),
              ...extra,
            });
          }
          resolve(outcome);
        });
      const blocking = link.transport === 'legacy' && role === 'result' && this.#wire.name === 'mcp-2025-11-25';
      const timeout = scope.at(scope.now() + (blocking ? BLOCKING_TIMEOUT_MS : REQUEST_TIMEOUT_MS), () =>
        fail({ kind: 'timeout' }, 'timeout'),
      );
      signal?.addEventListener('abort', onAbort, { once: true });

      if (taskId !== undefined && this.#memory(taskId).partitionUntil > scope.now()) return;
      if (role === 'status') {
        const throttle = this.#fire('poll_429', op) ?? this.#fire('poll_503', op);
        if (throttle !== null) {
          const status = throttle.fault === 'poll_429' ? 429 : 503;
          const retryAfterMs = throttle.arg > 0 ? throttle.arg : undefined;
          scope.at(scope.now() + this.#latency() * 2, () =>
            fail({ kind: 'throttled', status, retryAfterMs }, 'throttled', {
              ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
            }),
          );
          return;
        }
      }
      if (role === 'submit' && this.#fire('submit_request_lost', op) !== null) return;
      if (this.#fire('drop', op) !== null && this.#o.random.chance(0.5)) return;

      let sent = { method, params };
      if (role === 'status' && taskId !== undefined) sent = this.#misroute(op, taskId, method, params, principal, link);

      const instant = role === 'cancel' && op !== null && this.#o.instant.delete(op);
      const send = (run: () => void): void => {
        if (instant) run();
        else scope.at(scope.now() + this.#latency(), run);
      };
      const serverLink: LegacyLink = {
        signal: stream.signal,
        send: (request) => this.#serverRequest(link, op, taskId, request, stream.signal),
      };
      send(() => {
        void this.#deliver(principal, sent.method, sent.params, link.transport, serverLink).then((body) => {
          if (body === null) {
            scope.at(scope.now() + this.#latency(), () => fail({ kind: 'unavailable' }, 'unavailable'));
            return;
          }
          const duplicable = !(this.#wire.noDuplicate?.roles.includes(role) ?? false);
          if (duplicable && this.#fire('duplicate', op) !== null) {
            scope.at(
              scope.now() + this.#latency(),
              () => void this.#deliver(principal, sent.method, sent.params, link.transport, idleLink()),
            );
          }
          let answer = this.#answer(role, method, params, op, taskId, body);
          if (answer === 'lost') return;
          const held = answer === 'truncated' || this.#lies === null ? null : this.#lies.hold(asked, answer);
          const reply = (run: () => void): void =>
            held === null ? send(run) : void scope.at(Math.max(scope.now(), sentAt + HELD_READ_MS), run);
          reply(() => {
            if (held !== null && answer !== 'truncated' && answer !== 'lost') answer = held(answer);
            if (answer === 'truncated') {
              fail({ kind: 'malformed', body }, 'malformed');
              return;
            }
            done(() => {
              // The wire: JSON out, JSON in.
              const copy = JSON.parse(JSON.stringify(answer)) as Body;
              if (alive())
                log.add(this.#answerEvent(scope.now(), id, op, role, logMethod, method, params, taskId, copy));
              if (alive()) this.#lies?.delivered(asked, copy);
              if (taskId !== undefined && 'result' in copy) {
                const named = this.#wire.answer(role, method, params, copy.result).taskId;
                if (named !== undefined && named !== taskId) log.misdirected++;
              }
              resolve({ kind: 'answer', body: copy });
            });
          });
        });
      });
    });
  }

  /**
   * A server->client request on a legacy request's stream (the 2025 input side channel): delivered
   * to the client adapter's request handlers after a network delay, its reply carried back the same
   * way (and lost like any request: the client's write then times out and is retried). As in the
   * SDK, a delivered request waits for its reply by JSON-RPC id whatever becomes of the stream it
   * came on, for at most 60 s (the SDK's default request timeout); it fails at once when that stream
   * is already closed, and when the server process dies.
   */
  #serverRequest(
    link: Link,
    op: string | null,
    taskId: string | undefined,
    request: { method: string; params: Record<string, unknown> },
    stream: AbortSignal,
  ): Promise<unknown> {
    const { scope, log } = this.#o;
    return new Promise((resolve, reject) => {
      let open = true;
      const close = (): boolean => {
        if (!open) return false;
        open = false;
        this.#serverRequests.delete(fail);
        expiry?.cancel();
        return true;
      };
      const fail = (): void => void (close() && reject(new Error('server request not answered')));
      let expiry: { cancel(): void } | undefined;
      this.#serverRequests.add(fail);
      if (stream.aborted) return fail();
      void (async () => {
        const key = taskId === undefined ? undefined : await this.#inputKeyOf(taskId, request.params);
        scope.at(scope.now() + this.#latency(), () => {
          if (!open || stream.aborted || !link.alive() || key === undefined || taskId === undefined) return fail();
          expiry = scope.at(scope.now() + SERVER_REQUEST_TIMEOUT_MS, fail);
          const rpcId = `${key}~${++this.#seq}`;
          this.#o.trace.add('net', `#${this.#seq} ${request.method} to the client ${op ?? '-'} (${key})`);
          log.add({
            at: scope.now(),
            id: this.#seq,
            op,
            method: LOG_METHOD.result,
            kind: 'answer',
            taskId,
            keys: [key],
          });
          const reply: ServerRequestReply = {
            result: (value) => this.#reply(link, op, taskId, key, () => close() && (resolve(value), true)),
            error: async (code, message) => void (close() && reject(new ProtocolError(code, message))),
          };
          if (
            !dispatchServerRequest(link.handlers, { id: rpcId, method: request.method, params: request.params }, reply)
          ) {
            fail();
          }
        });
      })();
    });
  }

  /**
   * The client's answer to a server request: a write that may be lost either way, like any request.
   * Its acknowledgement is logged as one (S9) only when a live server request took it: on this wire
   * a reply is a JSON-RPC response, which the transport accepts whether or not anyone still waits.
   */
  #reply(link: Link, op: string | null, taskId: string, key: string, arrive: () => boolean): Promise<void> {
    const { scope, log } = this.#o;
    if (!link.alive()) return new Promise(() => {});
    const id = ++this.#seq;
    this.#o.trace.add('net', `#${id} reply to the server ${op ?? '-'} (${key})`);
    log.add({ at: scope.now(), id, op, method: LOG_METHOD.input, kind: 'send', taskId, keys: [key] });
    this.#o.onSend?.(LOG_METHOD.input, op, {});
    this.#memory(taskId).updateSent = true;
    return new Promise((resolve, reject) => {
      const lost = (): void => {
        scope.at(scope.now() + REQUEST_TIMEOUT_MS, () => {
          if (!link.alive()) return;
          log.add({ at: scope.now(), id, op, method: LOG_METHOD.input, kind: 'timeout', taskId });
          reject(new WireFailure('lost', 'request timed out'));
        });
      };
      if (this.#fire('drop', op) !== null && this.#o.random.chance(0.5)) return lost();
      scope.at(scope.now() + this.#latency(), () => {
        const taken = arrive();
        if (this.#fire('drop', op) !== null) return lost();
        scope.at(scope.now() + this.#latency(), () => {
          if (!link.alive()) return;
          if (taken) log.add({ at: scope.now(), id, op, method: LOG_METHOD.input, kind: 'answer', taskId });
          resolve();
        });
      });
    });
  }

  /** Which stored input request of the task a server request asks (its params, less the related-task tag). */
  async #inputKeyOf(taskId: string, params: Record<string, unknown>): Promise<string | undefined> {
    const owner = this.#o.facts.tasks.get(taskId)?.owner;
    if (owner === undefined) return undefined;
    const task = await this.#o.server.store.get(owner, taskId, this.#o.scope.now());
    if (task === null) return undefined;
    const { _meta: _tag, ...want } = params;
    for (const [key, stored] of Object.entries(task.inputRequests)) {
      const { _meta: _m, ...have } = stored.params;
      if (canonicalJson(have) === canonicalJson(want)) return key;
    }
    return undefined;
  }

  /** Task id misuse and 404-before-expiry: the request names another (or no) task. */
  #misroute(
    op: string | null,
    taskId: string,
    method: string,
    params: Record<string, unknown>,
    principal: string,
    link: Link,
  ): { method: string; params: Record<string, unknown> } {
    if (this.#fire('not_found_before_expiry', op) !== null) {
      return this.#wire.retarget(method, params, this.#randomId());
    }
    if (this.#fire('task_id_misuse', op) === null) return { method, params };
    void this.#probeS8(taskId, method, params, principal, link.transport);
    const other = [...this.#o.facts.tasks.keys()].find((id) => id !== taskId);
    return this.#wire.retarget(method, params, other ?? this.#randomId());
  }

  #randomId(): string {
    const bytes = Buffer.alloc(16);
    for (let i = 0; i < 4; i++) bytes.writeUInt32BE(this.#o.random.u32(), i * 4);
    return bytes.toString('base64url');
  }

  /** S8: a foreign principal asking for a real id must get exactly what an unknown id gets. */
  async #probeS8(
    taskId: string,
    method: string,
    params: Record<string, unknown>,
    principal: string,
    transport: Transport,
  ): Promise<void> {
    const mine = this.#wire.retarget(method, params, taskId);
    const foreign = await this.#deliver(`mallory-of-${principal}`, mine.method, mine.params, transport, idleLink());
    const unknownId = this.#wire.retarget(method, params, this.#randomId());
    const unknown = await this.#deliver(principal, unknownId.method, unknownId.params, transport, idleLink());
    if (foreign === null || unknown === null) return;
    if (canonicalJson(foreign) !== canonicalJson(unknown)) this.#o.log.s8Leaks.push(taskId);
  }

  /** Hands the request to the server's endpoint for `transport`; null when the server is down. */
  async #deliver(
    principal: string,
    method: string,
    params: Record<string, unknown>,
    transport: Transport,
    link: LegacyLink,
  ): Promise<Body | null> {
    try {
      if (transport === 'http' && method.includes(' ')) {
        const space = method.indexOf(' ');
        const verb = method.slice(0, space);
        const response = await this.#o.server.fetch(
          verb,
          method.slice(space + 1),
          verb === 'POST' ? params : undefined,
          principal,
        );
        const text = await response.text();
        const body = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
        if (response.ok) return { result: body };
        return { error: { code: response.status, message: `HTTP ${response.status}`, data: body } };
      }
      const result =
        transport === 'legacy'
          ? await this.#o.server.dispatchLegacy(method, params, principal, link)
          : await this.#o.server.dispatch(method, params, principal);
      return { result };
    } catch (error) {
      if (error instanceof ServerDown) return null;
      if (error instanceof ProtocolError) {
        return {
          error: {
            code: error.code,
            message: error.message,
            ...(error.data === undefined ? {} : { data: error.data }),
          },
        };
      }
      return { error: { code: -32603, message: 'Internal error' } };
    }
  }

  /** Response-side faults; returns the body to deliver, 'lost' or 'truncated'. */
  #answer(
    role: Role,
    method: string,
    params: Record<string, unknown>,
    op: string | null,
    taskId: string | undefined,
    body: Body,
  ): Body | 'lost' | 'truncated' {
    if (role === 'submit' && 'result' in body && this.#fire('submit_response_lost', op) !== null) return 'lost';
    if (role === 'cancel' && this.#fire('cancel_ack_lost', op) !== null) return 'lost';
    if (this.#fire('drop', op) !== null) return 'lost';
    // A result read of its own (2025-11-25, SEP-1391): the result faults hit it directly.
    // Only an answer that carries the outcome: an error about the read itself (an expired
    // operation, say) carries no result to lose, as on the wires that read it with the status.
    const carries = 'result' in body || (this.#wire.errorAnswer?.(role, body.error) ?? null) !== null;
    if (role === 'result' && taskId !== undefined && !this.#wire.resultByStatus && carries) {
      if (this.#fire('result_lost', op) !== null) return 'lost';
      if (this.#fire('result_truncated', op) !== null) return 'truncated';
      return body;
    }
    if (method === LOOKUP_METHOD && this.#lies !== null) return this.#lies.lookup(body);
    if (role !== 'status' || taskId === undefined || !('result' in body)) return body;
    const named = this.#wire.answer(role, method, params, body.result);
    // A read misrouted to another task (task id misuse) is an answer about that task, not this one:
    // counted as this task's first terminal answer, it made the real first one a second, open to the
    // result faults before the client had seen the task terminal (AIP-151 seed 6443: all three
    // truncations hit the only reads that could show `completed`).
    if (named.taskId !== undefined && named.taskId !== taskId) {
      return this.#lies === null ? body : this.#lies.status(taskId, body);
    }
    const memory = this.#memory(taskId);
    const status = named.status;
    let out: Body = body;
    if (status !== undefined && isTerminal(status)) {
      memory.terminalAnswers++;
      if (memory.terminalAnswers === 1) {
        const partition = this.#fire('not_found_after_expiry', op);
        if (partition !== null) {
          memory.partitionUntil = this.#o.scope.now() + partition.arg;
          this.#faultsOverAt = Math.max(this.#faultsOverAt, memory.partitionUntil);
          this.#o.log.partitions.push({ op, from: this.#o.scope.now(), until: memory.partitionUntil });
        }
      } else if (this.#wire.resultByStatus) {
        if (this.#fire('result_lost', op) !== null) return 'lost';
        if (this.#fire('result_truncated', op) !== null) return 'truncated';
      }
    } else if (memory.updateSent && memory.lastInputRequired !== undefined && status !== 'input_required') {
      if (this.#fire('input_replay', op) !== null) out = memory.lastInputRequired;
    } else if (memory.last !== undefined && this.#fire('poll_reorder', op) !== null) {
      out = memory.last;
    }
    if (status === 'input_required') memory.lastInputRequired = body;
    memory.last = body;
    return this.#lies === null ? out : this.#lies.status(taskId, out);
  }

  #answerEvent(
    at: number,
    id: number,
    op: string | null,
    role: Role,
    logMethod: string,
    method: string,
    params: Record<string, unknown>,
    taskId: string | undefined,
    body: Body,
  ): WireEvent {
    const base = { at, id, op, method: logMethod, ...(taskId === undefined ? {} : { taskId }) };
    if ('error' in body) {
      const fields = this.#wire.errorAnswer?.(role, body.error) ?? null;
      if (fields !== null) return { ...base, kind: 'answer', ...fields };
      const reason = (body.error.data as { reason?: unknown } | undefined)?.reason;
      return { ...base, kind: 'error', ...(typeof reason === 'string' ? { reason } : {}) };
    }
    const { inline, ...fields } = this.#wire.answer(role, method, params, body.result);
    // A synchronous answer names no task: the checkers tell it by the missing task id (C12).
    if (inline === true) {
      const { taskId: _t, ...rest } = base;
      return { ...rest, kind: 'answer', ...fields };
    }
    return { ...base, kind: 'answer', ...fields };
  }
}

/** A legacy link for requests no client waits on (duplicates, S8 probes): no stream, no side channel. */
function idleLink(): LegacyLink {
  return { signal: new AbortController().signal, send: () => Promise.reject(new Error('no client stream')) };
}

export { normalizeResult };
