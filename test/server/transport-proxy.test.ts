/**
 * `proxyTransport`: the one proxy the stdio wrappers (rate gate, fast path, close notice) are built
 * on. The SDK sets its handlers on the proxy and they land on the transport, wrapped; the SDK's
 * calls reach the transport's own methods, bound to it; an inbound message calls what was set on
 * the transport with no proxy in between.
 */
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { describe, expect, it } from 'vitest';
import { proxyTransport } from '../../src/server/transport-proxy.js';

/** A transport whose methods need their own `this` (a private field), as the SDK's may. */
class Private implements Transport {
  readonly #sent: JSONRPCMessage[] = [];
  onmessage?: Transport['onmessage'];
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];
  async start(): Promise<void> {}
  async close(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    this.#sent.push(message);
  }
  sent(): readonly JSONRPCMessage[] {
    return this.#sent;
  }
}

const ping = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('proxyTransport', () => {
  it('passes every member through, methods bound to the transport and bound once per member', async () => {
    const inner = new Private();
    const proxy = proxyTransport(inner);
    await proxy.send(ping(1));
    // Read detached, as the SDK's wrappers do: it still reaches the transport's private state.
    const member = (): Transport['send'] => Reflect.get<Transport, 'send'>(proxy, 'send');
    await member()(ping(2));
    expect(inner.sent()).toEqual([ping(1), ping(2)]);
    expect(member()).toBe(member());
    // A member replaced on the transport is bound afresh, never served stale.
    const replaced: JSONRPCMessage[] = [];
    inner.send = async (message) => {
      replaced.push(message);
    };
    await proxy.send(ping(3));
    expect(replaced).toEqual([ping(3)]);
  });

  it('answers the members `get` names with its values', async () => {
    const inner = new Private();
    const elsewhere: JSONRPCMessage[] = [];
    const proxy = proxyTransport(inner, { get: { send: async (message) => void elsewhere.push(message) } });
    await proxy.send(ping(1));
    expect(elsewhere).toEqual([ping(1)]);
    expect(inner.sent()).toEqual([]);
  });

  it('lands a handler set on the proxy on the transport, through the setter that names it', () => {
    const inner = new Private();
    const calls: string[] = [];
    const proxy = proxyTransport(inner, {
      set: {
        onclose: (handler) => () => {
          calls.push('wrapper');
          handler?.();
        },
      },
    });
    proxy.onclose = () => calls.push('owner');
    const onerror = (): void => undefined;
    proxy.onerror = onerror;
    inner.onclose?.();
    expect(calls).toEqual(['wrapper', 'owner']);
    expect(inner.onerror).toBe(onerror);
  });

  it('nests: a real stdio message reaches the SDK handler through both wrappers, with no proxy per message', async () => {
    const input = new PassThrough();
    const transport = new StdioServerTransport(input, new PassThrough());
    const seen: string[] = [];
    const wrap =
      (name: string) =>
      (handler: Transport['onmessage']): Transport['onmessage'] =>
        handler &&
        ((message, extra) => {
          seen.push(name);
          handler(message, extra);
        });
    let innerWrapper: Transport['onmessage'];
    const inner = proxyTransport(transport, {
      set: {
        onmessage: (handler) => (innerWrapper = wrap('inner')(handler)),
      },
    });
    const outer = proxyTransport(inner, { set: { onmessage: wrap('outer') } });
    const delivered = new Promise<JSONRPCMessage>((resolve) => {
      outer.onmessage = (message) => {
        seen.push('sdk');
        resolve(message);
      };
    });
    // What the transport calls per message is the wrapper itself, not a proxy's member.
    expect(transport.onmessage).toBe(innerWrapper);
    await outer.start();
    input.write(`${JSON.stringify(ping(7))}\n`);
    expect(await delivered).toEqual(ping(7));
    expect(seen).toEqual(['inner', 'outer', 'sdk']);
    await outer.close();
  });
});
