/**
 * The in-process network between the executor and the simulated server: an `RpcChannel` (or, for
 * AIP-151, a `fetch`) that delays every message (network stream), and applies the series' fault
 * rules: loses requests or responses, duplicates requests, answers with an older snapshot, truncates
 * bodies, throttles with 429/503 + Retry-After, misroutes task ids, partitions one task, all in
 * virtual time. Its parts: `state.ts` (what they share), `framing.ts` (outcomes as the client sees
 * them), `endpoint.ts` (the server's end), `responses.ts` (response-side faults), `misroute.ts`,
 * `side-channel.ts` (server->client requests).
 */
import type { RpcChannel } from '../../executor/wire-port.js';
import type { LegacyLink } from '../server/host.js';
import { LOG_METHOD, type Role } from '../wires/spec.js';
import type { SimWire } from '../wires/wire.js';
import { deliver, idleLink } from './endpoint.js';
import { httpFetch, rpcChannel } from './framing.js';
import { HELD_READ_MS, type Asked } from './misbehave.js';
import { misroute } from './misroute.js';
import { answerEvent, answerFaults } from './responses.js';
import { SideChannel } from './side-channel.js';
import {
  BLOCKING_TIMEOUT_MS,
  NetworkState,
  REQUEST_TIMEOUT_MS,
  type Body,
  type Link,
  type NetworkOptions,
  type Outcome,
} from './state.js';

/** The network of one series: every client process's channel crosses it. */
export class SimNetwork {
  readonly #net: NetworkState;
  readonly #keyOps = new Map<string, string>();
  readonly #side: SideChannel;

  constructor(options: NetworkOptions) {
    this.#net = new NetworkState(options);
    this.#side = new SideChannel(this.#net);
  }

  /** The wire spoken (and how its messages read). */
  get wire(): SimWire {
    return this.#net.wire;
  }

  /**
   * The channel of one client process acting as `principal`. Once `alive()` is false (the process
   * crashed) nothing is sent and no answer is delivered: its promises never settle. `transport`
   * picks the server endpoint (default: the wire's own era); server requests sent on its requests'
   * streams reach the handlers the adapter registers through the connection's request hook.
   */
  channel(principal: string, alive: () => boolean = () => true, transport?: 'modern' | 'legacy'): RpcChannel {
    const link: Link = {
      transport: transport ?? (this.#net.wire.transport === 'legacy' ? 'legacy' : 'modern'),
      alive,
      handlers: [],
    };
    return rpcChannel(link, (method, params, signal) => this.#call(principal, method, params, signal, link));
  }

  /**
   * HTTP of one client process (AIP-151): a `fetch` whose requests cross the same faulty network.
   * No answer rejects as a dropped connection; 429/503 carry `Retry-After` in seconds; a cut body is
   * a 200 whose JSON does not parse.
   */
  fetch(principal: string, alive: () => boolean = () => true): typeof fetch {
    const link: Link = { transport: 'http', alive, handlers: [] };
    return httpFetch(link, (method, params, signal) => this.#call(principal, method, params, signal, link));
  }

  /** Server requests still waiting for the client: failed when their server process dies or the series ends. */
  failServerRequests(): void {
    this.#side.failAll();
  }

  /** The request's role, the task it names and the call node it serves. */
  #read(method: string, params: Record<string, unknown>): { role: Role; op: string | null; taskId?: string } {
    const { facts } = this.#net.o;
    const c = this.#net.wire.classify(method, params, (token) => {
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
    return this.#net.faultsOverAt;
  }

  /**
   * One request of one client process: logged as sent, then the request-side faults (partition,
   * throttling, loss, misrouting), delivery after a network delay, the response-side faults, and
   * the answer after another delay, or the transport timeout.
   */
  #call(
    principal: string,
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal | undefined,
    link: Link,
  ): Promise<Outcome> {
    const net = this.#net;
    const { scope, trace, log } = net.o;
    const alive = link.alive;
    const id = ++net.seq;
    const { role, op, taskId } = this.#read(method, params);
    const asked: Asked = { role, method, params, op, taskId };
    const logMethod = role === 'other' ? method : LOG_METHOD[role];
    trace.add('net', `#${id} ${method} ${op ?? '-'}`);
    const keys = net.wire.inputKeys?.(method, params);
    log.add({
      at: scope.now(),
      id,
      op,
      method: logMethod,
      kind: 'send',
      ...(taskId === undefined ? {} : { taskId }),
      ...(keys === undefined ? {} : { keys }),
    });
    net.o.onSend?.(logMethod, op, params);
    net.lies?.sent(role, op);
    const sentAt = scope.now();
    if (role === 'input' && taskId !== undefined) net.memory(taskId).updateSent = true;

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
      const blocking = link.transport === 'legacy' && role === 'result' && net.wire.name === 'mcp-2025-11-25';
      const timeout = scope.at(scope.now() + (blocking ? BLOCKING_TIMEOUT_MS : REQUEST_TIMEOUT_MS), () =>
        fail({ kind: 'timeout' }, 'timeout'),
      );
      signal?.addEventListener('abort', onAbort, { once: true });

      if (taskId !== undefined && net.memory(taskId).partitionUntil > scope.now()) return;
      if (role === 'status') {
        const throttle = net.fire('poll_429', op) ?? net.fire('poll_503', op);
        if (throttle !== null) {
          const status = throttle.fault === 'poll_429' ? 429 : 503;
          const retryAfterMs = throttle.arg > 0 ? throttle.arg : undefined;
          scope.at(scope.now() + net.latency() * 2, () =>
            fail({ kind: 'throttled', status, retryAfterMs }, 'throttled', {
              ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
            }),
          );
          return;
        }
      }
      if (role === 'submit' && net.fire('submit_request_lost', op) !== null) return;
      if (net.fire('drop', op) !== null && net.o.random.chance(0.5)) return;

      let sent = { method, params };
      if (role === 'status' && taskId !== undefined) sent = misroute(net, op, taskId, method, params, principal, link);

      const instant = role === 'cancel' && op !== null && net.o.instant.delete(op);
      const send = (run: () => void): void => {
        if (instant) run();
        else scope.at(scope.now() + net.latency(), run);
      };
      const serverLink: LegacyLink = {
        signal: stream.signal,
        send: (request) => this.#side.request(link, op, taskId, request, stream.signal),
      };
      send(() => {
        void deliver(net.o.server, principal, sent.method, sent.params, link.transport, serverLink).then((body) => {
          if (body === null) {
            scope.at(scope.now() + net.latency(), () => fail({ kind: 'unavailable' }, 'unavailable'));
            return;
          }
          const duplicable = !(net.wire.noDuplicate?.roles.includes(role) ?? false);
          if (duplicable && net.fire('duplicate', op) !== null) {
            scope.at(
              scope.now() + net.latency(),
              () => void deliver(net.o.server, principal, sent.method, sent.params, link.transport, idleLink()),
            );
          }
          let answer = answerFaults(net, role, method, params, op, taskId, body);
          if (answer === 'lost') return;
          const held = answer === 'truncated' || net.lies === null ? null : net.lies.hold(asked, answer);
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
                log.add(answerEvent(net.wire, scope.now(), id, op, role, logMethod, method, params, taskId, copy));
              if (alive()) net.lies?.delivered(asked, copy);
              if (taskId !== undefined && 'result' in copy) {
                const named = net.wire.answer(role, method, params, copy.result).taskId;
                if (named !== undefined && named !== taskId) log.misdirected++;
              }
              resolve({ kind: 'answer', body: copy });
            });
          });
        });
      });
    });
  }
}
