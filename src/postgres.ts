/**
 * `mcp-terminus/postgres`: the PostgreSQL backends for running several nodes on one database.
 * A `TaskStore` for `terminus serve` nodes, `TaskEvents` over LISTEN/NOTIFY for cross-node
 * wake-ups, and a `Ledger` for executors. Imports `pg`.
 *
 * This entry sits above `store/` and `executor/` so that neither layer imports the other.
 * @packageDocumentation
 * @module mcp-terminus/postgres
 */
export {
  openPostgresTaskStore,
  createPostgresEvents,
  MIN_SERVER_VERSION,
  type PostgresTaskStoreOptions,
  type PostgresEventsOptions,
  type PostgresTaskEvents,
  type ConnectOptions,
} from './store/postgres/index.js';
export { openPostgresLedger, type PostgresLedgerOptions } from './executor/ledger/postgres.js';
