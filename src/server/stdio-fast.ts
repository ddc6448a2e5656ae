import { McpServer, Server, type McpServerFactory, type Transport } from '@modelcontextprotocol/server';
import { fastRpcAnswer, type FastMethod } from './http/fast-path.js';
import { trackInFlight, type InFlight } from './in-flight.js';
import type { Era, WireAdapter, WireDeps } from './wire/adapter.js';

/**
 * The task-method fast path on stdio (issue 14 item 1). On stdio the era is a property of the
 * connection: the SDK's `serveStdio` classifies the opening message, builds one instance of the
 * factory for that era and forwards every later message to it through a channel. So this hooks
 * the instance where that routing has already happened: it wraps the factory, and once the SDK
 * has connected an instance to its channel, it sees each message the channel delivers before
 * `Protocol._onrequest` does. An ordinary task-method request it can vouch for is answered from
 * the engine with the wire's own handler and written back through the same channel (so the SDK's
 * serializer writes the line, and the channel settles the request as answered); anything else
 * goes on to the SDK untouched. The rate gate (`CallerRates.gateTransport`) and the SDK's era and
 * listen routing run before either path. test/server/stdio-fast-path.test.ts compares the byte
 * streams of a child process with it on and off.
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

/** The factory, with each instance it builds answering its connection's task methods fast. */
export function withStdioFastPath(
  factory: McpServerFactory,
  methods: StdioFastMethods,
  serverInfo: { readonly name: string; readonly version: string },
): McpServerFactory {
  return async (context) => {
    const product = await factory(context);
    const server = product instanceof McpServer ? product.server : product;
    if (server instanceof Server)
      hookConnect(server, context.era === 'modern' ? 'modern' : 'legacy', methods, serverInfo);
    return product;
  };
}

function hookConnect(
  server: Server,
  era: Era,
  methods: StdioFastMethods,
  serverInfo: { readonly name: string; readonly version: string },
): void {
  const connect = server.connect.bind(server);
  const byName = era === 'modern' ? methods.modern : methods.legacy;
  server.connect = async (transport: Transport) => {
    await connect(transport);
    intercept(transport, (message, classified) => {
      // Only the opening message comes with the SDK's classification; leave it to the SDK.
      if (classified) return undefined;
      return fastRpcAnswer(message, byName, era, serverInfo, server);
    });
  };
}

type Answerer = (message: unknown, classified: boolean) => Promise<Record<string, unknown>> | undefined;

/**
 * Wraps the channel's `onmessage` (set by `Protocol.connect`): an answerable request is answered
 * through the channel's `send`, anything else goes on to the SDK. The in-flight count wraps this
 * in turn, so it has counted the request being dispatched: a count over 1 is an id still in
 * flight, which goes to the SDK (`trackInFlight`).
 */
function intercept(transport: Transport, answer: Answerer): void {
  const inner = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const { id } = message as { id?: unknown };
    const free = (typeof id === 'string' || typeof id === 'number') && inFlight.count(id) === 1;
    const quick = free ? answer(message, extra?.classification !== undefined) : undefined;
    if (quick === undefined) {
      inner?.(message, extra);
      return;
    }
    quick.then(
      (response) => transport.send(response as never),
      (error: unknown) => transport.onerror?.(error instanceof Error ? error : new Error(String(error))),
    );
  };
  // Installed over the interceptor, so it has counted a request before the interceptor sees it.
  const inFlight: InFlight = trackInFlight(transport);
}
