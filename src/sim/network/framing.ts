/**
 * How a request's network outcome reaches its client, as the executor's adapters frame failures
 * (`http-channel.ts`): no answer (timeout, connection refused) is `WireFailure('lost')`, 429/503 is
 * `throttled` with Retry-After, a cut body is `malformed`, and a JSON-RPC error answer is
 * `RpcErrorFailure`; over HTTP (AIP-151) the same outcomes as a `fetch` `Response`.
 */
import { registerRequestHook } from '../../executor/adapters/connection.js';
import { RpcErrorFailure } from '../../executor/adapters/rpc-error.js';
import { WireFailure, type RpcChannel } from '../../executor/wire-port.js';
import { httpMethod } from '../wires/aip151.js';
import type { Link, Outcome } from './state.js';

/** Sends one request across the network for one client process. */
export type Send = (
  method: string,
  params: Record<string, unknown>,
  signal: AbortSignal | undefined,
) => Promise<Outcome>;

/**
 * An `RpcChannel` over `send`. Once `link.alive()` is false nothing is sent and no answer is
 * delivered: its promises never settle. Server requests reach the handlers the adapter registers
 * through the connection's request hook.
 */
export function rpcChannel(link: Link, send: Send): RpcChannel {
  const alive = link.alive;
  const channel: RpcChannel = (method, params, options) => {
    if (!alive()) return new Promise(() => {});
    return new Promise((resolve, reject) => {
      send(method, params, options?.signal).then(
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
 * A `fetch` over `send` (AIP-151). No answer rejects as a dropped connection; 429/503 carry
 * `Retry-After` in seconds; a cut body is a 200 whose JSON does not parse.
 */
export function httpFetch(link: Link, send: Send): typeof fetch {
  const alive = link.alive;
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (!alive()) return new Promise(() => {});
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const verb = (init?.method ?? 'GET').toUpperCase();
    const text = typeof init?.body === 'string' ? init.body : undefined;
    const params = text === undefined ? {} : (JSON.parse(text) as Record<string, unknown>);
    const signal = init?.signal ?? undefined;
    const outcome = await send(httpMethod(verb, url.pathname + url.search), params, signal);
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
