/**
 * The call node `terminus call` (and the simulation's re-runs) uses when `--call-node` is not given: derived from the server, the
 * tool and the canonical JSON of the arguments, so running the same command twice is the same call
 * (C5) rather than a second operation. Each run of the command is one generation of that node:
 * `cli-<digest>` first, then `cli-<digest>.2`, `.3`, ... A generation still in flight (working,
 * detached, UNKNOWN) is re-attached; once it has a receipt (or was proven never created) the next
 * run takes the next generation. `--new` always takes the next free one.
 */
import { digestOf } from '../core/digest.js';
import type { Ledger } from './ledger-port.js';
import type { ToolOperation } from './operation.js';
import { IN_FLIGHT_STATES } from './transitions.js';

/** 96 bits of the digest: collisions between different commands are not a practical concern. */
const DIGEST_CHARS = 24;
/** `ops list` shows at most this many too; a ledger with more in flight is beyond a person's CLI. */
const IN_FLIGHT_LIMIT = 10_000;

/** The first-generation call node of a command. */
export function derivedCallNode(server: string, tool: string, args: Record<string, unknown>): string {
  return `cli-${digestOf({ server, tool, args }).slice(0, DIGEST_CHARS)}`;
}

const generation = (base: string, n: number): string => (n === 1 ? base : `${base}.${n}`);

/** What the command does with its call node, and the run before it (for the message). */
export type CallNodeChoice =
  | { readonly kind: 'first'; readonly callNodeId: string }
  /** The previous run is still in flight: re-attach to it. */
  | { readonly kind: 'attach'; readonly callNodeId: string; readonly previous: ToolOperation }
  /** The previous run settled (or `--new`): a new operation. */
  | { readonly kind: 'new'; readonly callNodeId: string; readonly previous: ToolOperation };

/**
 * Finds the generation to use. In-flight generations are looked up among the in-flight operations
 * (so one pruned older generation cannot hide a running later one); the next free generation by
 * walking them in order (one indexed lookup each, well under a millisecond on SQLite).
 */
export async function chooseCallNode(ledger: Ledger, base: string, fresh: boolean): Promise<CallNodeChoice> {
  if (!fresh) {
    const mine = (await ledger.listByState(IN_FLIGHT_STATES, IN_FLIGHT_LIMIT)).filter(
      (r) => r.callNodeId === base || r.callNodeId.startsWith(`${base}.`),
    );
    // After a `--new` there may be several: the newest is the one this command last started.
    const latest = mine.sort((a, b) => b.createdAt - a.createdAt)[0];
    if (latest !== undefined) return { kind: 'attach', callNodeId: latest.callNodeId, previous: latest };
  }
  let previous: ToolOperation | null = null;
  for (let n = 1; ; n++) {
    const callNodeId = generation(base, n);
    const record = await ledger.loadByCallNode(callNodeId);
    if (record === null)
      return previous === null ? { kind: 'first', callNodeId } : { kind: 'new', callNodeId, previous };
    previous = record;
  }
}
