/**
 * PostgreSQL backend: a `TaskStore` several server nodes share, and `TaskEvents` over
 * LISTEN/NOTIFY so a cancel or an input response on one node wakes the handler on another.
 * @packageDocumentation
 */
export { openPostgresTaskStore } from './open.js';
export type { PostgresTaskStoreOptions } from './open.js';
export { openPostgresBackend } from './backend.js';
export type { PostgresBackend, PostgresBackendOptions } from './backend.js';
export { createPostgresEvents } from './events.js';
export type { PostgresEventsOptions, PostgresTaskEvents } from './events.js';
export { MIN_SERVER_VERSION } from '../../sql/pg-pool.js';
export type { ConnectOptions } from '../../sql/pg-pool.js';
