import type { Transport } from '@modelcontextprotocol/server';

/** The requests a connection's transport has dispatched and not answered, by JSON-RPC id. */
export interface InFlight {
  /** How many requests with this id are dispatched and unanswered (the one being dispatched included). */
  count(id: string | number): number;
}

/**
 * Counts the requests `transport` delivers and has not answered, by id (wraps its `onmessage` and
 * `send`; call it after `Protocol.connect` set them). A request whose id is still in flight makes
 * the SDK re-map that id (the HTTP transport its stream, `Protocol` its abort controller), which a
 * fast path answering around the SDK would not reproduce: the fast paths leave such a request to
 * the SDK. An id leaves when its response is sent, or when `notifications/cancelled` names it (the
 * SDK aborts that handler and never answers it), so only live requests are held.
 */
export function trackInFlight(transport: Transport): InFlight {
  const live = new Map<string | number, number>();
  const done = (id: unknown): void => {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const count = live.get(id) ?? 0;
    if (count <= 1) live.delete(id);
    else live.set(id, count - 1);
  };
  const inner = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const { id, method, params } = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) {
      live.set(id, (live.get(id) ?? 0) + 1);
    } else if (method === 'notifications/cancelled') {
      done(params?.requestId);
    }
    inner?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (method === undefined) done(id);
    return send(message, options);
  };
  return { count: (id) => live.get(id) ?? 0 };
}
