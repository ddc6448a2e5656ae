import type { Transport } from '@modelcontextprotocol/server';
import { proxyTransport } from './transport-proxy.js';

/**
 * `transport` seen through a proxy that notices when it closes, without taking `onclose` from the
 * SDK entry that owns it: the entry's handler still runs, then `closed` resolves.
 */
export function noticeClose<T extends Transport>(transport: T): { transport: T; closed: Promise<void> } {
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => (ended = resolve));
  const proxy = proxyTransport(transport, {
    set: {
      onclose: (handler) => () => {
        try {
          handler?.();
        } finally {
          ended();
        }
      },
    },
  });
  return { transport: proxy, closed };
}
