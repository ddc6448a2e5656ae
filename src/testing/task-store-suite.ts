import { describe } from 'vitest';
import type { TaskStore } from '../store/port.js';
import { basicCases } from './basics.js';
import { eventCases } from './events.js';
import { outboxCases } from './outbox.js';
import { suiteContext, type DescribeTaskStoreOptions } from './context.js';
import { fencingCases } from './fencing.js';
import { idempotencyCases } from './idempotency.js';
import { inputCases } from './input.js';
import { limitsCases } from './limits.js';
import { listingCases } from './listing.js';
import { logCases } from './logs.js';
import { ownerCases } from './owners.js';
import { terminalCases } from './terminal.js';
import { ttlCases } from './ttl.js';
import { workerCases } from './worker.js';

/**
 * The `TaskStore` conformance suite: every backend MUST pass it (memory, SQLite, PostgreSQL, and
 * yours). Each case opens a fresh store with `open`, uses a fixed clock (`now` is passed explicitly,
 * never read from the wall clock) and closes it afterwards. Case names cite the invariant they check
 * (S1..S8 of docs/guarantees.md). Call it at the top level of a vitest test file.
 *
 * @example
 * ```ts
 * import { describeTaskStore } from 'mcp-terminus/testing';
 * import { openMyStore } from '../src/my-store.js';
 *
 * describeTaskStore('my store', async () => openMyStore({ url: process.env.DB_URL! }), {
 *   cleanup: async () => truncateTables(),
 * });
 * ```
 */
export function describeTaskStore(
  name: string,
  open: () => Promise<TaskStore>,
  options: DescribeTaskStoreOptions = {},
): void {
  describe(`TaskStore conformance: ${name}`, () => {
    const context = suiteContext(open, options);
    basicCases(context);
    terminalCases(context);
    fencingCases(context);
    idempotencyCases(context);
    inputCases(context);
    ttlCases(context);
    listingCases(context);
    workerCases(context);
    limitsCases(context);
    logCases(context);
    ownerCases(context);
    eventCases(context);
    outboxCases(context);
  });
}
