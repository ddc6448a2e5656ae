import type { Database } from 'better-sqlite3';
import { TerminusError } from '../../core/errors.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT`;

const SELECT_APPLIED = `SELECT id FROM schema_migrations ORDER BY id`;

const INSERT_APPLIED = `INSERT INTO schema_migrations (id, name) VALUES (@id, @name)`;

/**
 * Applies the missing migrations in one IMMEDIATE transaction: two processes opening the same file
 * at once serialise on the write lock, and the second sees the first one's rows and applies nothing.
 * Returns the ids applied now.
 */
export function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): number[] {
  const apply = db.transaction(() => {
    db.exec(CREATE_MIGRATIONS_TABLE);
    const applied = new Set(db.prepare(SELECT_APPLIED).pluck().all() as number[]);
    const known = new Set(migrations.map((m) => m.id));
    const unknown = [...applied].filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new TerminusError('internal', `database has migrations this code does not know: ${unknown.join(', ')}`);
    }
    const missing = migrations.filter((m) => !applied.has(m.id)).sort((a, b) => a.id - b.id);
    for (const migration of missing) {
      db.exec(migration.sql);
      db.prepare(INSERT_APPLIED).run({ id: migration.id, name: migration.name });
    }
    return missing.map((m) => m.id);
  });
  return apply.immediate();
}
