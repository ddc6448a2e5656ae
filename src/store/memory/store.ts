import { checkEventBound, type EventBound } from '../../core/task-events.js';
import type { TaskStore } from '../port.js';
import { cancel, countByStatus, get, list, respond } from './client.js';
import { create, lookupKey } from './create.js';
import { readEvents } from './events.js';
import { memoryOutbox } from './outbox.js';
import { appendLog, readLog } from './log.js';
import { countOwners, renameOwners } from './owners.js';
import { assertOpen, createState, type MemoryState } from './state.js';
import {
  checkpoint,
  claim,
  countLive,
  finish,
  heartbeat,
  progress,
  release,
  requestInput,
  sweepExpired,
  sweepTombstones,
} from './worker.js';

export interface MemoryTaskStoreOptions {
  /** How many progress and log events each task keeps (its newest). Default `DEFAULT_EVENT_BOUND` (10,000). */
  readonly eventBound?: EventBound;
  /** Told how many events one write dropped past `eventBound` (metrics). MUST NOT throw. */
  readonly onEventsDropped?: (count: number) => void;
}

/**
 * An in-memory `TaskStore` with the same semantics as the SQLite one (it passes the same
 * `describeTaskStore` suite): fencing, burned keys, late outcomes, TTL via `isExpired`, newest-first
 * cursors. Records are deep-copied in and out. Nothing survives the process, so it is for tests,
 * the simulation and single-process demos only; S9 does not hold.
 *
 * @example
 * ```ts
 * import { createMemoryTaskStore } from 'mcp-terminus';
 * const store = createMemoryTaskStore();
 * const { task } = await store.create({ id, owner, tool, args, requestDigest, submissionKey: null,
 *   wire: 'mcp-tasks-ext', ttlMs: 3_600_000, keepAliveMs: null, pollIntervalMs: 1000, now: clock.now() });
 * ```
 */
export function createMemoryTaskStore(options: MemoryTaskStoreOptions = {}): TaskStore {
  const state = createState({
    ...checkEventBound(options.eventBound),
    ...(options.onEventsDropped === undefined ? {} : { onDropped: options.onEventsDropped }),
  });
  // Every method runs synchronously inside an async function: a throw becomes a rejection, and no
  // two operations interleave, which is what makes concurrent claims safe here.
  const run = async <T>(op: (s: MemoryState) => T): Promise<T> => {
    assertOpen(state);
    return op(state);
  };
  return {
    create: (input) => run((s) => create(s, input)),
    get: (owner, id, now) => run((s) => get(s, owner, id, now)),
    lookupKey: (owner, key, now) => run((s) => lookupKey(s, owner, key, now)),
    list: (owner, query, now) => run((s) => list(s, owner, query, now)),
    listAllOwners: (query, now) => run((s) => list(s, null, query, now)),
    countByStatus: (now) => run((s) => countByStatus(s, now)),
    cancel: (owner, id, now) => run((s) => cancel(s, owner, id, now)),
    respond: (owner, id, responses, now) => run((s) => respond(s, owner, id, responses, now)),
    claim: (request) => run((s) => claim(s, request)),
    heartbeat: (fence, leaseMs, now) => run((s) => heartbeat(s, fence, leaseMs, now)),
    progress: (fence, value, now) => run((s) => progress(s, fence, value, now)),
    checkpoint: (fence, data, now) => run((s) => checkpoint(s, fence, data, now)),
    requestInput: (fence, key, request, now) => run((s) => requestInput(s, fence, key, request, now)),
    finish: (fence, outcome, now) => run((s) => finish(s, fence, outcome, now)),
    appendLog: (fence, lines, bound, now, skipped) => run((s) => appendLog(s, fence, lines, bound, now, skipped)),
    readLog: (owner, id, query, now) => run((s) => readLog(s, owner, id, query, now)),
    readEvents: (owner, id, query, now) => run((s) => readEvents(s, owner, id, query, now)),
    release: (fence) => run((s) => release(s, fence)),
    sweepExpired: (now, limit) => run((s) => sweepExpired(s, now, limit)),
    sweepTombstones: (before, limit) => run((s) => sweepTombstones(s, before, limit)),
    countLive: (owner) => run((s) => countLive(s, owner)),
    countOwners: (prefix) => run((s) => countOwners(s, prefix)),
    renameOwners: (from, to) => run((s) => renameOwners(s, from, to)),
    webhooks: memoryOutbox(state, (op) => run(() => op())),
    close: async () => {
      state.closed = true;
    },
  };
}
