import type { Transport } from '@modelcontextprotocol/server';

/** A transport's handlers (`onmessage`, `onclose`, `onerror`): what the SDK sets on a transport it owns. */
type Handlers = Pick<Transport, 'onmessage' | 'onclose' | 'onerror'>;

/** What a transport proxy does instead of passing a member through, by member name. */
export interface TransportTraps {
  /** Members read from the proxy as these values instead of the target's (not bound). */
  readonly get?: Partial<Transport>;
  /**
   * Handlers set on the proxy, each mapped to the value set on the target (a wrapper of it). Only
   * the setting goes through the map: a message the target delivers calls what was set on it
   * directly, so a wrapper adds no proxy work per inbound message.
   */
  readonly set?: { readonly [K in keyof Handlers]?: (value: Handlers[K]) => Handlers[K] };
}

/**
 * `target` seen through a proxy: every member is the target's own, a method bound to the target
 * (so a transport with private fields works through it), except the members `traps.get` answers;
 * a handler the owner sets on the proxy lands on the target, through `traps.set` if it names it.
 * A bound method is cached per name until the target's member changes, so the SDK's `send` on
 * every answer costs one map look-up, not a `bind`.
 */
export function proxyTransport<T extends Transport>(target: T, traps: TransportTraps = {}): T {
  const { get: overrides = {}, set: setters = {} } = traps;
  const bound = new Map<PropertyKey, { readonly method: unknown; readonly bound: unknown }>();
  return new Proxy(target, {
    get(inner, prop) {
      if (Object.hasOwn(overrides, prop)) return (overrides as Record<PropertyKey, unknown>)[prop];
      const value: unknown = Reflect.get(inner, prop, inner);
      if (typeof value !== 'function') return value;
      const cached = bound.get(prop);
      if (cached?.method === value) return cached.bound;
      const fresh: unknown = (value as (...a: unknown[]) => unknown).bind(inner);
      bound.set(prop, { method: value, bound: fresh });
      return fresh;
    },
    set(inner, prop, value: unknown) {
      const setter = Object.hasOwn(setters, prop)
        ? (setters as Record<PropertyKey, ((v: unknown) => unknown) | undefined>)[prop]
        : undefined;
      return Reflect.set(inner, prop, setter === undefined ? value : setter(value), inner);
    },
  });
}
