/**
 * Server->client requests on a legacy request's stream (the 2025-11-25 input side channel), and
 * the client's replies to them, across the same faulty network as any request.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import { canonicalJson } from '../../core/digest.js';
import { dispatchServerRequest, type ServerRequestReply } from '../../executor/adapters/connection.js';
import { WireFailure } from '../../executor/wire-port.js';
import { LOG_METHOD } from '../wires/spec.js';
import { REQUEST_TIMEOUT_MS, SERVER_REQUEST_TIMEOUT_MS, type Link, type NetworkState } from './state.js';

/** The server requests of one network: sent, waiting for their replies, failed when their server dies. */
export class SideChannel {
  readonly #net: NetworkState;
  readonly #waiting = new Set<() => void>();

  constructor(net: NetworkState) {
    this.#net = net;
  }

  /** Server requests still waiting for the client: failed when their server process dies or the series ends. */
  failAll(): void {
    for (const fail of [...this.#waiting]) fail();
  }

  /**
   * A server->client request on a legacy request's stream (the 2025 input side channel): delivered
   * to the client adapter's request handlers after a network delay, its reply carried back the same
   * way (and lost like any request: the client's write then times out and is retried). As in the
   * SDK, a delivered request waits for its reply by JSON-RPC id whatever becomes of the stream it
   * came on, for at most 60 s (the SDK's default request timeout); it fails at once when that stream
   * is already closed, and when the server process dies.
   */
  request(
    link: Link,
    op: string | null,
    taskId: string | undefined,
    request: { method: string; params: Record<string, unknown> },
    stream: AbortSignal,
  ): Promise<unknown> {
    const net = this.#net;
    const { scope, log } = net.o;
    return new Promise((resolve, reject) => {
      let open = true;
      const close = (): boolean => {
        if (!open) return false;
        open = false;
        this.#waiting.delete(fail);
        expiry?.cancel();
        return true;
      };
      const fail = (): void => void (close() && reject(new Error('server request not answered')));
      let expiry: { cancel(): void } | undefined;
      this.#waiting.add(fail);
      if (stream.aborted) return fail();
      void (async () => {
        const key = taskId === undefined ? undefined : await this.#inputKeyOf(taskId, request.params);
        scope.at(scope.now() + net.latency(), () => {
          if (!open || stream.aborted || !link.alive() || key === undefined || taskId === undefined) return fail();
          expiry = scope.at(scope.now() + SERVER_REQUEST_TIMEOUT_MS, fail);
          const rpcId = `${key}~${++net.seq}`;
          net.o.trace.add('net', `#${net.seq} ${request.method} to the client ${op ?? '-'} (${key})`);
          log.add({
            at: scope.now(),
            id: net.seq,
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
    const net = this.#net;
    const { scope, log } = net.o;
    if (!link.alive()) return new Promise(() => {});
    const id = ++net.seq;
    net.o.trace.add('net', `#${id} reply to the server ${op ?? '-'} (${key})`);
    log.add({ at: scope.now(), id, op, method: LOG_METHOD.input, kind: 'send', taskId, keys: [key] });
    net.o.onSend?.(LOG_METHOD.input, op, {});
    net.memory(taskId).updateSent = true;
    return new Promise((resolve, reject) => {
      const lost = (): void => {
        scope.at(scope.now() + REQUEST_TIMEOUT_MS, () => {
          if (!link.alive()) return;
          log.add({ at: scope.now(), id, op, method: LOG_METHOD.input, kind: 'timeout', taskId });
          reject(new WireFailure('lost', 'request timed out'));
        });
      };
      if (net.fire('drop', op) !== null && net.o.random.chance(0.5)) return lost();
      scope.at(scope.now() + net.latency(), () => {
        const taken = arrive();
        if (net.fire('drop', op) !== null) return lost();
        scope.at(scope.now() + net.latency(), () => {
          if (!link.alive()) return;
          if (taken) log.add({ at: scope.now(), id, op, method: LOG_METHOD.input, kind: 'answer', taskId });
          resolve();
        });
      });
    });
  }

  /** Which stored input request of the task a server request asks (its params, less the related-task tag). */
  async #inputKeyOf(taskId: string, params: Record<string, unknown>): Promise<string | undefined> {
    const net = this.#net;
    const owner = net.o.facts.tasks.get(taskId)?.owner;
    if (owner === undefined) return undefined;
    const task = await net.o.server.store.get(owner, taskId, net.o.scope.now());
    if (task === null) return undefined;
    const { _meta: _tag, ...want } = params;
    for (const [key, stored] of Object.entries(task.inputRequests)) {
      const { _meta: _m, ...have } = stored.params;
      if (canonicalJson(have) === canonicalJson(want)) return key;
    }
    return undefined;
  }
}
