import { TerminusError } from '../core/errors.js';
import type { Db, SchemaTables, Sql } from './pg-db.js';

export interface Migration<T extends SchemaTables> {
  /** Applied in ascending order; never renumber or edit one that has shipped, add the next. */
  readonly id: number;
  readonly name: string;
  readonly sql: Sql<T>;
}

// Several nodes start at once: they queue on this lock (held to the end of the transaction), and
// each one after the first finds every migration applied. The key is per schema (the store and the ledger may share one).
const LOCK: Sql<SchemaTables> = () => `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`;

// Looked up first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when the schema
// exists, and a deployment may give the application role only the schema, not the database.
const SCHEMA_EXISTS: Sql<SchemaTables> = () => `SELECT 1 FROM pg_namespace WHERE nspname = $1`;

const CREATE_SCHEMA: Sql<SchemaTables> = (t) => `CREATE SCHEMA IF NOT EXISTS ${t.schema}`;

const CREATE_MIGRATIONS_TABLE: Sql<SchemaTables> = (t) => `
CREATE TABLE IF NOT EXISTS ${t.migrations} (
  component  text NOT NULL,
  id         integer NOT NULL,
  name       text NOT NULL,
  applied_at bigint NOT NULL,
  PRIMARY KEY (component, id)
)`;

const SELECT_APPLIED: Sql<SchemaTables> = (t) => `SELECT id FROM ${t.migrations} WHERE component = $1 ORDER BY id`;

const INSERT_APPLIED: Sql<SchemaTables> = (t) =>
  `INSERT INTO ${t.migrations} (component, id, name, applied_at) VALUES ($1, $2, $3, $4)`;

/**
 * Applies the missing migrations of `component` ('tasks', 'ledger') in one transaction behind an
 * advisory lock, recording each with `now` (the injected clock). DDL is transactional in
 * PostgreSQL, so a failure leaves nothing half-applied. Returns the ids applied now.
 */
export async function migrate<T extends SchemaTables>(
  db: Db<T>,
  component: string,
  migrations: readonly Migration<T>[],
  now: number,
): Promise<number[]> {
  const lockKey = `mcp-terminus:migrate:${db.tables.schemaName}`;
  return db.transaction('migrate', async (tx) => {
    await tx.query(LOCK, [lockKey]);
    if ((await tx.query(SCHEMA_EXISTS, [db.tables.schemaName])).rowCount === 0) await tx.query(CREATE_SCHEMA, []);
    await tx.query(CREATE_MIGRATIONS_TABLE, []);
    const applied = new Set((await tx.query<{ id: number }>(SELECT_APPLIED, [component])).rows.map((r) => r.id));
    const known = new Set(migrations.map((m) => m.id));
    const unknown = [...applied].filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new TerminusError(
        'internal',
        `database schema ${db.tables.schema} has ${component} migrations this code does not know: ${unknown.join(', ')} (was it migrated by a newer mcp-terminus?)`,
      );
    }
    const missing = migrations.filter((m) => !applied.has(m.id)).sort((a, b) => a.id - b.id);
    for (const migration of missing) {
      await tx.query(migration.sql, []);
      await tx.query(INSERT_APPLIED, [component, migration.id, migration.name, now]);
    }
    return missing.map((m) => m.id);
  });
}
