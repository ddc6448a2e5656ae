import { McpServer, Server, type McpServerFactory, type Transport } from '@modelcontextprotocol/server';
import { fastRpcAnswer, type FastMethod } from './http/fast-path.js';
import { trackInFlight, type InFlight } from './in-flight.js';
import { proxyTransport } from './transport-proxy.js';
import type { Era, WireAdapter, WireDeps } from './wire/adapter.js';

/**
 * The task-method fast path on stdio (issue 14 item 1). On stdio the era is a property of the
 * connection: the SDK's `serveStdio` classifies the opening message, builds one instance of the
 * factory for that era and forwards every later message to it through a channel of its own, which
 * checks each message it forwards and each answer it sends with zod. So the fast path sits on the
 * connection's transport, ahead of that routing (`StdioFastPath.transport`), and learns the era from
 * the factory (`StdioFastPath.factory`): once the SDK has pinned an instance (its channel delivered
 * a message without the opening's classification), an ordinary task-method request it can vouch for
 * is answered from the engine with the wire's own handler and written to the transport, and the
 * SDK never sees it; anything else, and everything before the pin, goes on to the SDK untouched.
 * The rate gate (`CallerRates.gateTransport`) runs before either path, the SDK's era and listen
 * routing before the pin. test/server/stdio-fast-path.test.ts compares the byte streams of a child
 * process with it on and off; test/server/stdio-fast-wire.test.ts counts what reaches the SDK.
 */

/** The fast methods of each era's wires (`WireAdapter.fastMethods`, `legacyFastMethods`). */
export interface StdioFastMethods {
  readonly modern: ReadonlyMap<string, FastMethod>;
  readonly legacy: ReadonlyMap<string, FastMethod>;
}

/** Each era's fast methods of `wires`, bound to the stdio deps (as `installTerminus` installs them per era). */
export function stdioFastMethods(wires: readonly WireAdapter[], deps: WireDeps): StdioFastMethods {
  const of = (era: Era, pick: (w: WireAdapter) => ReadonlyMap<string, FastMethod> | undefined) =>
    new Map(wires.filter((w) => w.eras.includes(era)).flatMap((w) => [...(pick(w) ?? [])]));
  return {
    modern: of('modern', (w) => w.fastMethods?.(deps)),
    legacy: of('legacy', (w) => w.legacyFastMethods?.(deps)),
  };
}

/** One stdio connection's fast path: its factory and its transport go to the SDK's `serveStdio` together. */
export interface StdioFastPath {
  /** The factory, each instance it builds telling the connection its era once the SDK pinned it. */
  factory(inner: McpServerFactory): McpServerFactory;
  /** The connection's transport, answering the pinned era's fast methods before the SDK sees them. */
  transport<T extends Transport>(wire: T): T;
}

/** The instance the SDK pinned the connection to, and its era. */
interface Pinned {
  readonly era: Era;
  readonly server: Server;
}

/** A fast path for one `serveStdio` call (one connection). */
export function stdioFastPath(
  methods: StdioFastMethods,
  serverInfo: { readonly name: string; readonly version: string },
): StdioFastPath {
  let pinned: Pinned | undefined;
  const answer = (message: unknown): Promise<Record<string, unknown>> | undefined => {
    if (pinned === undefined) return undefined;
    const byName = pinned.era === 'modern' ? methods.modern : methods.legacy;
    return fastRpcAnswer(message, byName, pinned.era, serverInfo, pinned.server);
  };
  return {
    factory: (inner) => async (context) => {
      const product = await inner(context);
      const server = product instanceof McpServer ? product.server : product;
      if (server instanceof Server) {
        const era: Era = context.era === 'modern' ? 'modern' : 'legacy';
        watchPin(server, () => {
          pinned = { era, server };
        });
        const closed = server.onclose;
        server.onclose = () => {
          if (pinned?.server === server) pinned = undefined;
          closed?.();
        };
      }
      return product;
    },
    transport: (wire) => intercept(wire, answer),
  };
}

/**
 * Calls `pin` once the SDK has pinned the connection to `server`: when its channel delivers the
 * first message that is neither the modern probe's `server/discover` nor a notification after it
 * (the SDK keeps a probe instance only for those; a legacy opening, a modern request, or anything
 * delivered without the opening's classification pins the connection to this instance for good).
 */
function watchPin(server: Server, pin: () => void): void {
  const connect = server.connect.bind(server);
  server.connect = async (channel: Transport) => {
    await connect(channel);
    const inner = channel.onmessage;
    let probe = false;
    let pinned = false;
    channel.onmessage = (message, extra) => {
      if (!pinned) {
        const { id, method } = message as { id?: unknown; method?: unknown };
        const classified = extra?.classification !== undefined;
        if (classified && method === 'server/discover') probe = true;
        else if (!(classified && probe && id === undefined)) {
          pinned = true;
          pin();
        }
      }
      inner?.(message, extra);
    };
  };
}

type Answerer = (message: unknown) => Promise<Record<string, unknown>> | undefined;

/**
 * `wire` with the SDK's `onmessage` wrapped: an answerable request is answered through the wire's
 * `send`, anything else goes on to the SDK. Both paths' requests are counted by id until their
 * answer is sent (`trackInFlight`, on a lane between the wire and both paths): a request whose id
 * is still in flight goes to the SDK. Every other member is the wire's own.
 */
function intercept<T extends Transport>(wire: T, answer: Answerer): T {
  let deliver: Transport['onmessage'];
  const lane = {
    onmessage: (message, extra) => deliver?.(message, extra),
    send: (message, options) => wire.send(message, options),
  } as Transport;
  // Counts a request before the interceptor sees it, and settles it on either path's answer.
  const inFlight: InFlight = trackInFlight(lane);
  const send: Transport['send'] = (message, options) => lane.send(message, options);
  return proxyTransport(wire, {
    get: { send },
    set: {
      onmessage: (sdk) => {
        if (sdk === undefined) return sdk;
        deliver = (message, extra) => {
          const { id } = message as { id?: unknown };
          const free = (typeof id === 'string' || typeof id === 'number') && inFlight.count(id) === 1;
          const quick = free ? answer(message) : undefined;
          if (quick === undefined) {
            sdk(message, extra);
            return;
          }
          const report = (error: unknown): void =>
            wire.onerror?.(error instanceof Error ? error : new Error(String(error)));
          quick.then((response) => send(response as never).catch(report), report);
        };
        return lane.onmessage;
      },
    },
  });
}
