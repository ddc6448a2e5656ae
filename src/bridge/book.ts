/**
 * Which ledger operations belong to which caller of this bridge, and the never-twice key.
 *
 * A call node id is `bridge:<namespace>:<owner>:<key>:<nonce>`, each tag a sha256 prefix:
 * - namespace: the bridge's name, so two bridges (or `terminus call`) sharing one ledger never see
 *   each other's operations;
 * - owner: the caller (`stdio`, or the HTTP `Authorization` header), so one caller never reads
 *   another's operation, even by its id;
 * - key: upstream + tool + canonical arguments (`digestOf`, key order ignored). A call whose key
 *   matches an operation of the same owner that has not settled (no receipt yet) re-attaches to it;
 *   once it settled, the same call is a new operation under a fresh nonce.
 * A task made by a 2025-11-25 host that asked for a `task.ttl` ends in `:ttl<ms>` (the ttl
 * granted), so the front forgets the task when it passes, after a restart too.
 */
import { digestOf } from '../core/digest.js';
import type { Ids } from '../core/ports.js';
import type { Ledger } from '../executor/ledger-port.js';
import { LOCAL_STATES, type LocalState, type ToolOperation } from '../executor/operation.js';
import { SETTLED_STATES } from '../executor/transitions.js';

const tag = (value: unknown): string => digestOf(value).slice(0, 24);

/** Every state without a receipt or a never-created proof: the never-twice window. */
export const OPEN_STATES: readonly LocalState[] = LOCAL_STATES.filter(
  (s) => !(SETTLED_STATES as readonly LocalState[]).includes(s),
);

const TTL_SUFFIX = /:ttl(\d{1,15})$/;

/** Most operations scanned per listing; a bridge has a handful in flight. */
const SCAN_LIMIT = 10_000;

export class Book {
  private readonly ledger: Ledger;
  private readonly namespace: string;

  constructor(ledger: Ledger, namespace: string) {
    this.ledger = ledger;
    this.namespace = tag(namespace);
  }

  private prefix(owner: string): string {
    return `bridge:${this.namespace}:${tag(owner)}:`;
  }

  /** The never-twice key of a call. */
  keyOf(upstream: string, tool: string, args: Record<string, unknown>): string {
    return tag({ upstream, tool, args });
  }

  newCallNode(owner: string, key: string, ids: Ids, ttlMs: number | null = null): string {
    const ttl = ttlMs === null ? '' : `:ttl${Math.round(ttlMs)}`;
    return `${this.prefix(owner)}${key}:${ids.unique('n')}${ttl}`;
  }

  /** The task ttl granted with the operation of this call node (ms from its creation), or null: none. */
  ttlOf(callNodeId: string): number | null {
    const match = TTL_SUFFIX.exec(callNodeId);
    return match === null ? null : Number(match[1]);
  }

  /** The caller's unsettled operation for this key, if any. */
  async open(owner: string, key: string): Promise<ToolOperation | null> {
    const start = `${this.prefix(owner)}${key}:`;
    const open = await this.ledger.listByState(OPEN_STATES, SCAN_LIMIT);
    return open.find((op) => op.callNodeId.startsWith(start)) ?? null;
  }

  /** The operation if it exists AND is this caller's; null otherwise (the two are not told apart). */
  async own(owner: string, operationId: string): Promise<ToolOperation | null> {
    const op = await this.ledger.load(operationId);
    return op !== null && op.callNodeId.startsWith(this.prefix(owner)) ? op : null;
  }

  ownsCallNode(owner: string, callNodeId: string): boolean {
    return callNodeId.startsWith(this.prefix(owner));
  }

  /** This bridge's call nodes, any owner (for resume and notifications). */
  isOurs(callNodeId: string): boolean {
    return callNodeId.startsWith(`bridge:${this.namespace}:`);
  }

  /** The caller's unsettled operations, and the last `recent` settled ones (newest first). */
  async list(owner: string, recent: number): Promise<{ open: ToolOperation[]; settled: ToolOperation[] }> {
    const prefix = this.prefix(owner);
    const mine = (ops: ToolOperation[]) => ops.filter((op) => op.callNodeId.startsWith(prefix));
    const open = mine(await this.ledger.listByState(OPEN_STATES, SCAN_LIMIT));
    const settled = mine(await this.ledger.listByState(SETTLED_STATES, SCAN_LIMIT))
      .sort((a, b) => b.updatedAt - a.updatedAt)
      .slice(0, recent);
    return { open, settled };
  }
}
