import { randomBytes } from 'node:crypto';
import { createRequestStateCodec, ProtocolError, type RequestStateCodec } from '@modelcontextprotocol/server';
import { ownerOf } from './owner.js';

/**
 * Seals a preflight's `state` into the 2026-07-28 `requestState` and opens it on the next round:
 * HMAC-SHA256 (the SDK's `createRequestStateCodec`), valid for 10 minutes, bound to the caller (its
 * owner, hashed into the seal) and carrying the tool's name, so a state minted for one tool or one
 * principal is refused on another. Signed, not encrypted: the client can read the state.
 */
export interface PreflightStateSeal {
  seal(tool: string, state: unknown, ctx: SealContext): Promise<string>;
  /** The state of `tool` sealed in `wire`; `-32602` (`invalid_request_state`) when it is not ours. */
  open(tool: string, wire: string, ctx: SealContext): Promise<unknown>;
}

type SealContext = Parameters<RequestStateCodec['verify']>[1];

interface Sealed {
  readonly tool: string;
  readonly state: unknown;
}

/**
 * A seal under `key` (at least 32 bytes). Without a key, a random one per process: every round of a
 * preflight must then reach the same process, so several nodes behind one address need one key.
 */
export function preflightStateSeal(key?: string | Uint8Array): PreflightStateSeal {
  const codec = createRequestStateCodec<Sealed>({
    key: key ?? randomBytes(32),
    bind: (ctx) => ownerOf(ctx, 'http'),
  });
  return {
    seal: (tool, state, ctx) => codec.mint({ tool, state }, ctx),
    open: async (tool, wire, ctx) => {
      let sealed: Sealed;
      try {
        sealed = await codec.verify(wire, ctx);
      } catch {
        throw invalidState();
      }
      if (sealed.tool !== tool) throw invalidState();
      return sealed.state;
    },
  };
}

function invalidState(): ProtocolError {
  return new ProtocolError(-32602, 'Invalid or expired requestState', { reason: 'invalid_request_state' });
}

let processSeal: PreflightStateSeal | undefined;

/** The per-process seal of servers given no key. */
export function defaultPreflightStateSeal(): PreflightStateSeal {
  processSeal ??= preflightStateSeal();
  return processSeal;
}
