/**
 * `mcp-terminus/sqlite`: the embedded SQLite backends (better-sqlite3, WAL, synchronous=FULL): the
 * server's `TaskStore` and the executor's `Ledger`.
 *
 * This entry sits above `store/` and `executor/` so that neither layer imports the other.
 * @packageDocumentation
 * @module mcp-terminus/sqlite
 */
export {
  DEFAULT_COMMIT_DELAY_MS,
  openSqliteTaskStore,
  type CommitReport,
  type SqliteTaskStoreOptions,
} from './store/sqlite/index.js';
export { openSqliteLedger, type SqliteLedgerOptions } from './executor/ledger/sqlite.js';
