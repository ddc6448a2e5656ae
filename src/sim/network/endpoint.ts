/** The server's end of the network: a request handed to the endpoint of its transport (JSON-RPC or HTTP). */
import { ProtocolError } from '@modelcontextprotocol/server';
import { ServerDown, type LegacyLink, type SimServer } from '../server/host.js';
import type { Transport } from '../wires/spec.js';
import type { Body } from './state.js';

/** Hands the request to the server's endpoint for `transport`; null when the server is down. */
export async function deliver(
  server: SimServer,
  principal: string,
  method: string,
  params: Record<string, unknown>,
  transport: Transport,
  link: LegacyLink,
): Promise<Body | null> {
  try {
    if (transport === 'http' && method.includes(' ')) {
      const space = method.indexOf(' ');
      const verb = method.slice(0, space);
      const response = await server.fetch(
        verb,
        method.slice(space + 1),
        verb === 'POST' ? params : undefined,
        principal,
      );
      const text = await response.text();
      const body = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
      if (response.ok) return { result: body };
      return { error: { code: response.status, message: `HTTP ${response.status}`, data: body } };
    }
    const result =
      transport === 'legacy'
        ? await server.dispatchLegacy(method, params, principal, link)
        : await server.dispatch(method, params, principal);
    return { result };
  } catch (error) {
    if (error instanceof ServerDown) return null;
    if (error instanceof ProtocolError) {
      return {
        error: {
          code: error.code,
          message: error.message,
          ...(error.data === undefined ? {} : { data: error.data }),
        },
      };
    }
    return { error: { code: -32603, message: 'Internal error' } };
  }
}

/** A legacy link for requests no client waits on (duplicates, S8 probes): no stream, no side channel. */
export function idleLink(): LegacyLink {
  return { signal: new AbortController().signal, send: () => Promise.reject(new Error('no client stream')) };
}
