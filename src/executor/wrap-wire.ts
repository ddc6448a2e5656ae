/**
 * One decorator of a `ClientWire`'s requests, for what watches a wire from outside (metrics, spans,
 * the CLI's bar, the bridge's pushes): it wraps each request method of the port once, so a request
 * added to the port is seen by every watcher without a new hand-written wrapper in each.
 */
import type { ClientWire } from './wire-port.js';

type AsyncMethod = (...args: never[]) => Promise<unknown>;

/** The port's requests: each method that asks the server and answers with a promise (not `close`). */
export type WireRequestName = Exclude<
  { [K in keyof ClientWire]-?: NonNullable<ClientWire[K]> extends AsyncMethod ? K : never }[keyof ClientWire],
  'close'
>;

type Method<K extends WireRequestName> = Extract<NonNullable<ClientWire[K]>, AsyncMethod>;

/** One request as it goes out: its method and its arguments (`args[0]` is the task id where there is one). */
export type WireCall = {
  [K in WireRequestName]: { readonly request: K; readonly args: Parameters<Method<K>> };
}[WireRequestName];

/** One request and what it answered. */
export type WireAnswered = {
  [K in WireRequestName]: {
    readonly request: K;
    readonly args: Parameters<Method<K>>;
    readonly answer: Awaited<ReturnType<Method<K>>>;
  };
}[WireRequestName];

/** What a decorator does around each request; every hook is optional. */
export interface WireHooks {
  /**
   * Runs the request: MUST return the promise of `send` (it may call it inside a context, say).
   * `answered` and `failed` run inside it. Default: `send()`.
   */
  readonly run?: <R>(call: WireCall, send: () => Promise<R>) => Promise<R>;
  /** The request answered; a throw here rejects the request with it. */
  readonly answered?: (answered: WireAnswered) => void;
  /** The request rejected with `error`; the caller gets the same error afterwards. */
  readonly failed?: (call: WireCall, error: unknown) => void;
}

/** Every request of the port, checked by the compiler: a request added to `ClientWire` must be listed. */
const REQUESTS = {
  submit: true,
  lookupKey: true,
  getStatus: true,
  fetchResult: true,
  cancel: true,
  sendInput: true,
  logs: true,
  events: true,
} as const satisfies Record<WireRequestName, true>;

/** The port's request names, for tests and for decorators that map each one. */
export const WIRE_REQUESTS = Object.keys(REQUESTS) as readonly WireRequestName[];

/**
 * The same wire with `hooks` around each of its requests. Every other member (`wire`, `version`,
 * the listeners, `close`) passes through, bound to the wire; a request the wire lacks stays absent.
 * A Proxy, not a spread: an adapter's getters and later members stay as they are.
 */
export function wrapWireRequests(wire: ClientWire, hooks: WireHooks): ClientWire {
  const wrapped = new Map<string | symbol, unknown>();
  for (const request of WIRE_REQUESTS) {
    const method: unknown = Reflect.get(wire, request);
    if (typeof method !== 'function') continue;
    // Bound: an adapter with private fields fails when called with the proxy as `this`.
    const bound = (method as (...args: unknown[]) => Promise<unknown>).bind(wire);
    wrapped.set(request, (...args: unknown[]) => {
      const call = { request, args } as WireCall;
      const send = async (): Promise<unknown> => {
        let answer: unknown;
        try {
          answer = await bound(...args);
        } catch (error) {
          hooks.failed?.(call, error);
          throw error;
        }
        hooks.answered?.({ request, args, answer } as WireAnswered);
        return answer;
      };
      return hooks.run === undefined ? send() : hooks.run(call, send);
    });
  }
  return new Proxy(wire, {
    get(target, property, receiver) {
      if (wrapped.has(property)) return wrapped.get(property);
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
