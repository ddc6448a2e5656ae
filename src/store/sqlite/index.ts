/**
 * `mcp-terminus/sqlite`: the embedded SQLite `TaskStore` (better-sqlite3).
 * @packageDocumentation
 */
export { openSqliteTaskStore } from './open.js';
export type { SqliteTaskStoreOptions } from './open.js';
export { DEFAULT_COMMIT_DELAY_MS } from './group-commit.js';
export type { CommitReport } from './group-commit.js';
