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
import { isTerminal, type TaskStatus } from '../../core/task.js';
import { RpcErrorFailure } from '../../executor/adapters/rpc-error.js';
import { WireFailure, type RpcChannel } from '../../executor/wire-port.js';
import type { ClockScope } from '../clock.js';
import type { FaultClass, MessageRule } from '../faults.js';
import type { SimRandom } from '../random.js';
import { ServerDown, type SimServer } from '../server/host.js';
import type { ServerFacts } from '../server/facts.js';
import type { Trace } from '../trace.js';
import type { WireLog } from './wire-log.js';
import { HELD_READ_MS, Misbehaviour } from './misbehave.js';
import { LOOKUP_METHOD } from '../../executor/adapters/envelope.js';

/** Transport timeout of one request, virtual ms. */
export const REQUEST_TIMEOUT_MS = 2_000;

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
  /** Called synchronously when a request leaves the client: the C8/C10 send-time checks. */
  readonly onSend?: (method: string, op: string | null, params: Record<string, unknown>) => void;
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
  /** The server's lies (C13 fault classes); inert unless a misbehaviour rule is planned. */
  readonly #lies: Misbehaviour;

  constructor(options: NetworkOptions) {
    this.#o = options;
    this.#lies = new Misbehaviour((fault, op) => this.#fire(fault, op));
  }

  /**
   * The channel of one client process acting as `principal`. Once `alive()` is false (the process
   * crashed) nothing is sent and no answer is delivered: its promises never settle.
   */
  channel(principal: string, alive: () => boolean = () => true): RpcChannel {
    return (method, params, options) => {
      if (!alive()) return new Promise(() => {});
      return new Promise((resolve, reject) => {
        this.#call(principal, method, params, options?.signal, alive).then(
          (value) => alive() && resolve(value),
          (error: unknown) => alive() && reject(error as Error),
        );
      });
    };
  }

  #memory(taskId: string): TaskMemory {
    let m = this.#tasks.get(taskId);
    if (m === undefined) {
      m = { terminalAnswers: 0, partitionUntil: 0, updateSent: false };
      this.#tasks.set(taskId, m);
    }
    return m;
  }

  #opOf(method: string, params: Record<string, unknown>): string | null {
    if (method === 'tools/call') {
      const args = params.arguments as Record<string, unknown> | undefined;
      const op = typeof args?.op === 'string' ? args.op : null;
      const key = (params._meta as Record<string, unknown> | undefined)?.['mcp-terminus.dev/submissionKey'];
      if (op !== null && typeof key === 'string') this.#keyOps.set(key, op);
      return op;
    }
    if (typeof params.submissionKey === 'string') return this.#keyOps.get(params.submissionKey) ?? null;
    if (typeof params.taskId === 'string') return this.#o.facts.tasks.get(params.taskId)?.callNode ?? null;
    return null;
  }

  /** The first live rule of `fault` for `op` that fires now (drawing its probability). */
  #fire(fault: FaultClass, op: string | null): MessageRule | null {
    for (const rule of this.#o.rules) {
      if (rule.fault !== fault || rule.remaining <= 0 || (rule.op !== null && rule.op !== op)) continue;
      if (rule.p < 1 && !this.#o.random.chance(rule.p)) continue;
      rule.remaining--;
      this.#o.fired.set(fault, (this.#o.fired.get(fault) ?? 0) + 1);
      this.#o.trace.add('fault', `${fault} on ${op ?? '-'}`);
      return rule;
    }
    return null;
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
    alive: () => boolean,
  ): Promise<Record<string, unknown>> {
    const { scope, trace, log } = this.#o;
    const id = ++this.#seq;
    const op = this.#opOf(method, params);
    const taskId = typeof params.taskId === 'string' ? params.taskId : undefined;
    trace.add('net', `#${id} ${method} ${op ?? '-'}`);
    log.add({
      at: scope.now(),
      id,
      op,
      method,
      kind: 'send',
      ...(taskId === undefined ? {} : { taskId }),
      ...keysOf(method, params),
    });
    this.#o.onSend?.(method, op, params);
    this.#lies.sent(method, op);
    const sentAt = scope.now();
    if (method === 'tasks/update' && taskId !== undefined) this.#memory(taskId).updateSent = true;

    return new Promise((resolve, reject) => {
      let settled = false;
      const onAbort = (): void => done(() => reject(signal?.reason as Error));
      const done = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        timeout.cancel();
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const fail = (error: Error, kind: 'timeout' | 'unavailable' | 'throttled' | 'malformed', extra = {}): void =>
        done(() => {
          // Only what a live process received is logged: an answer that reaches a crashed executor
          // binds nobody (a Retry-After it carried was never seen by the next incarnation).
          if (alive()) {
            log.add({ at: scope.now(), id, op, method, kind, ...(taskId === undefined ? {} : { taskId }), ...extra });
          }
          reject(error);
        });
      const timeout = scope.at(scope.now() + REQUEST_TIMEOUT_MS, () =>
        fail(new WireFailure('lost', 'request timed out'), 'timeout'),
      );
      signal?.addEventListener('abort', onAbort, { once: true });

      if (taskId !== undefined && this.#memory(taskId).partitionUntil > scope.now()) return;
      if (method === 'tasks/get') {
        const throttle = this.#fire('poll_429', op) ?? this.#fire('poll_503', op);
        if (throttle !== null) {
          const status = throttle.fault === 'poll_429' ? 429 : 503;
          const retryAfterMs = throttle.arg > 0 ? throttle.arg : undefined;
          scope.at(scope.now() + this.#latency() * 2, () =>
            fail(new WireFailure('throttled', `HTTP ${status}`, { httpStatus: status, retryAfterMs }), 'throttled', {
              ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
            }),
          );
          return;
        }
      }
      if (method === 'tools/call' && this.#fire('submit_request_lost', op) !== null) return;
      if (this.#fire('drop', op) !== null && this.#o.random.chance(0.5)) return;

      let sent = params;
      if (method === 'tasks/get' && taskId !== undefined) sent = this.#misroute(op, taskId, params, principal);

      const instant = method === 'tasks/cancel' && op !== null && this.#o.instant.delete(op);
      const send = (run: () => void): void => {
        if (instant) run();
        else scope.at(scope.now() + this.#latency(), run);
      };
      send(() => {
        void this.#deliver(principal, method, sent).then((body) => {
          if (body === null) {
            scope.at(scope.now() + this.#latency(), () =>
              fail(new WireFailure('lost', 'connection refused'), 'unavailable'),
            );
            return;
          }
          if (this.#fire('duplicate', op) !== null) {
            scope.at(scope.now() + this.#latency(), () => void this.#deliver(principal, method, sent));
          }
          let answer = this.#answer(method, op, taskId, body);
          if (answer === 'lost') return;
          const held = answer === 'truncated' ? null : this.#lies.hold(method, op, taskId, answer);
          const reply = (run: () => void): void =>
            held === null ? send(run) : void scope.at(Math.max(scope.now(), sentAt + HELD_READ_MS), run);
          reply(() => {
            if (held !== null && answer !== 'truncated' && answer !== 'lost') answer = held(answer);
            if (answer === 'truncated') {
              fail(new WireFailure('malformed', 'response body cut short'), 'malformed');
              return;
            }
            done(() => {
              // The wire: JSON out, JSON in.
              const copy = JSON.parse(JSON.stringify(answer)) as Body;
              if (alive()) log.add(answerEvent(scope.now(), id, op, method, taskId, copy));
              if (alive()) this.#lies.delivered(method, op, taskId, copy);
              if ('error' in copy) reject(new RpcErrorFailure(copy.error.code, copy.error.message, copy.error.data));
              else {
                if (taskId !== undefined && copy.result.taskId !== undefined && copy.result.taskId !== taskId) {
                  log.misdirected++;
                }
                resolve(copy.result);
              }
            });
          });
        });
      });
    });
  }

  /** Task id misuse and 404-before-expiry: the request names another (or no) task. */
  #misroute(op: string | null, taskId: string, params: Record<string, unknown>, principal: string) {
    if (this.#fire('not_found_before_expiry', op) !== null) {
      return { ...params, taskId: this.#randomId() };
    }
    if (this.#fire('task_id_misuse', op) === null) return params;
    void this.#probeS8(taskId, principal);
    const other = [...this.#o.facts.tasks.keys()].find((id) => id !== taskId);
    return { ...params, taskId: other ?? this.#randomId() };
  }

  #randomId(): string {
    const bytes = Buffer.alloc(16);
    for (let i = 0; i < 4; i++) bytes.writeUInt32BE(this.#o.random.u32(), i * 4);
    return bytes.toString('base64url');
  }

  /** S8: a foreign principal asking for a real id must get exactly what an unknown id gets. */
  async #probeS8(taskId: string, principal: string): Promise<void> {
    const foreign = await this.#deliver(`mallory-of-${principal}`, 'tasks/get', { taskId });
    const unknown = await this.#deliver(principal, 'tasks/get', { taskId: this.#randomId() });
    if (foreign === null || unknown === null) return;
    if (canonicalJson(foreign) !== canonicalJson(unknown)) this.#o.log.s8Leaks.push(taskId);
  }

  /** Hands the request to the server; null when the server is down. */
  async #deliver(principal: string, method: string, params: Record<string, unknown>): Promise<Body | null> {
    try {
      return { result: await this.#o.server.dispatch(method, params, principal) };
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
  #answer(method: string, op: string | null, taskId: string | undefined, body: Body): Body | 'lost' | 'truncated' {
    if (method === 'tools/call' && 'result' in body && this.#fire('submit_response_lost', op) !== null) return 'lost';
    if (method === 'tasks/cancel' && this.#fire('cancel_ack_lost', op) !== null) return 'lost';
    if (this.#fire('drop', op) !== null) return 'lost';
    if (method === LOOKUP_METHOD) return this.#lies.lookup(body);
    if (method !== 'tasks/get' || taskId === undefined || !('result' in body)) return body;
    const memory = this.#memory(taskId);
    const status = body.result.status as TaskStatus | undefined;
    let out: Body = body;
    if (status !== undefined && isTerminal(status)) {
      memory.terminalAnswers++;
      if (memory.terminalAnswers === 1) {
        const partition = this.#fire('not_found_after_expiry', op);
        if (partition !== null) {
          memory.partitionUntil = this.#o.scope.now() + partition.arg;
          this.#o.log.partitions.push({ op, from: this.#o.scope.now(), until: memory.partitionUntil });
        }
      } else {
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
    return this.#lies.status(taskId, out);
  }
}

function keysOf(method: string, params: Record<string, unknown>): { keys?: readonly string[] } {
  if (method !== 'tasks/update') return {};
  const responses = params.inputResponses;
  return responses !== null && typeof responses === 'object' ? { keys: Object.keys(responses) } : {};
}

function answerEvent(
  at: number,
  id: number,
  op: string | null,
  method: string,
  taskId: string | undefined,
  body: Body,
) {
  const base = { at, id, op, method, ...(taskId === undefined ? {} : { taskId }) };
  if ('error' in body) {
    const reason = (body.error.data as { reason?: unknown } | undefined)?.reason;
    return { ...base, kind: 'error' as const, ...(typeof reason === 'string' ? { reason } : {}) };
  }
  const r = body.result;
  const task = (r.task as Record<string, unknown> | undefined) ?? r;
  // A call answered synchronously (no task, C12): its CallToolResult is a completed payload.
  const inline = method === 'tools/call' && r.resultType !== 'task' && Array.isArray(r.content);
  if (inline) {
    return {
      ...base,
      kind: 'answer' as const,
      status: 'completed' as const,
      payload: canonicalJson(normalizeResult(r)),
    };
  }
  const status = task.status as TaskStatus | undefined;
  const payload =
    status === 'completed'
      ? canonicalJson(normalizeResult(task.result))
      : status === 'failed'
        ? canonicalJson(task.error)
        : undefined;
  const inputs = task.inputRequests as Record<string, unknown> | undefined;
  return {
    ...base,
    ...(typeof task.taskId === 'string' ? { taskId: task.taskId } : {}),
    kind: 'answer' as const,
    ...(status === undefined ? {} : { status }),
    ...(payload === undefined ? {} : { payload }),
    ...(inputs === undefined ? {} : { keys: Object.keys(inputs) }),
  };
}

/** A `CallToolResult` without the envelope keys the wire adds (`resultType`, `_meta`). */
export function normalizeResult(result: unknown): unknown {
  if (result === null || typeof result !== 'object') return result;
  const { resultType: _r, _meta: _m, ...rest } = result as Record<string, unknown>;
  return rest;
}
