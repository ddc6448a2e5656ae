import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { it } from 'vitest';
import { openPostgresTaskStore, type PostgresTaskStoreOptions } from '../../src/store/postgres/index.js';
import type { TaskStore } from '../../src/store/port.js';

/**
 * The database the PostgreSQL tests use: `TERMINUS_TEST_PG_URL`, which `.ci/postgres.sh start`
 * exports. Without it the tests fail, in CI and locally alike: a missing database is a failure,
 * never a silent skip (STYLE.md).
 */
export const PG_URL = process.env.TERMINUS_TEST_PG_URL ?? '';

/** Registers one failing test that says how to get a database; call it when `PG_URL` is empty. */
export function failWithoutDatabase(): void {
  it('needs a PostgreSQL: set TERMINUS_TEST_PG_URL (source .ci/postgres.sh start)', () => {
    throw new Error(
      'TERMINUS_TEST_PG_URL is not set. Start a throwaway server with `source .ci/postgres.sh start` ' +
        '(it exports the variable), run the tests, then `bash .ci/postgres.sh stop`.',
    );
  });
}

/** A schema name no other test (or earlier run) uses; each test gets its own tables. */
export function freshSchema(label = 't'): string {
  return `${label}_${randomBytes(6).toString('hex')}`;
}

export function adminPool(): pg.Pool {
  return new pg.Pool({ connectionString: PG_URL, max: 4 });
}

export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

export function openStore(schema: string, extra: Partial<PostgresTaskStoreOptions> = {}): Promise<TaskStore> {
  return openPostgresTaskStore({ connectionString: PG_URL, schema, maxConnections: 8, ...extra });
}
