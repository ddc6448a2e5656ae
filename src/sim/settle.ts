/**
 * The quiet step between two timers. Virtual time may only move when nothing else can happen at
 * the current instant: every promise chain has run and every `setImmediate` callback (the SQLite
 * store's group commit flushes on one) has fired. `settle` yields to the event loop until the
 * activity counters stop moving and no tracked I/O is in flight.
 *
 * Deterministic because everything in a series is in-process: microtasks and immediates run in
 * the order they were queued, and the order they were queued depends only on the seed.
 */
import { setImmediate as immediate } from 'node:timers/promises';

export interface Quiet {
  /** Tracked asynchronous calls still in flight (SQLite group commit). */
  inFlight(): number;
}

/** Rounds after which a series that never goes quiet is declared stuck (a busy loop at one instant). */
const MAX_ROUNDS = 10_000;

export async function settle(quiet: Quiet): Promise<void> {
  // One event-loop turn drains every microtask, including those queued while draining; only work
  // parked on `setImmediate` (tracked as in flight) needs more turns. Nothing else in a series
  // waits on a real macrotask: better-sqlite3 is synchronous and every timer is virtual.
  for (let round = 0; round < MAX_ROUNDS; round++) {
    await immediate();
    if (quiet.inFlight() === 0) return;
  }
  throw new Error(`simulation did not settle after ${MAX_ROUNDS} event-loop rounds (busy loop at one instant?)`);
}
