import type { Transport } from '@modelcontextprotocol/server';
import type { StdioServerHandle } from '@modelcontextprotocol/server/stdio';

/**
 * A stdio connection being served: the SDK's handle (`close()`), and `closed`, which resolves once
 * the connection has ended: the client closed stdin (the MCP stdio binding's shutdown, after which
 * a server should exit), the transport failed, or `close()` was called. The store and the engine
 * are the caller's; a process serving one client stops them then. Written out where it is returned
 * (`StdioServerHandle & { readonly closed: Promise<void> }`), so the API reference needs no name.
 */
type StdioConnection = StdioServerHandle & { readonly closed: Promise<void> };

/**
 * `transport` seen through a proxy that notices when it closes, without taking `onclose` from the
 * SDK entry that owns it: the entry's handler still runs, then `closed` resolves.
 */
export function noticeClose<T extends Transport>(transport: T): { transport: T; closed: Promise<void> } {
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => (ended = resolve));
  const proxy = new Proxy(transport, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
    set(target, prop, value: unknown) {
      if (prop !== 'onclose') return Reflect.set(target, prop, value, target);
      const handler = value as Transport['onclose'];
      target.onclose = () => {
        try {
          handler?.();
        } finally {
          ended();
        }
      };
      return true;
    },
  });
  return { transport: proxy, closed };
}

/** The SDK's handle with `closed` beside it. */
export function stdioConnection(handle: StdioServerHandle, closed: Promise<void>): StdioConnection {
  return { close: () => handle.close(), closed };
}
