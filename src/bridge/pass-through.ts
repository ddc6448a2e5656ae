/** Synchronous tools: a plain `tools/call` on the upstream's connection, answered as it answered. */
import { ProtocolError } from '@modelcontextprotocol/server';
import { WireFailure } from '../executor/wire-port.js';
import { toolError } from './render.js';
import { rpcErrorOf, type Upstream } from './upstream.js';

/** A synchronous tool: the upstream's answer as it is; its JSON-RPC errors stay JSON-RPC errors. */
export async function passThrough(
  upstream: Upstream,
  tool: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  try {
    return await upstream.call(tool, args, signal);
  } catch (error) {
    const rpc = rpcErrorOf(error);
    if (rpc !== null) throw new ProtocolError(rpc.code, rpc.message);
    const what = error instanceof WireFailure ? error.kind : 'error';
    return toolError(`upstream ${upstream.name} did not answer ${tool} (${what}): ${String(error)}`);
  }
}
