import Database, { type Database as Db } from 'better-sqlite3';
import { damaged } from '../../sql/sqlite-open.js';
import { migrate } from './migrate.js';

/** The task store's schema check at open; the file checks (header, WAL, `quick_check`) are in sql/sqlite-open.ts. */

type Columns = ReadonlyMap<string, readonly string[]>;

let expected: Columns | undefined;

/** The tables and columns the migrations make, read from a scratch in-memory database. */
function expectedSchema(): Columns {
  if (expected !== undefined) return expected;
  const scratch = new Database(':memory:');
  try {
    migrate(scratch);
    expected = tablesOf(scratch);
  } finally {
    scratch.close();
  }
  return expected;
}

function tablesOf(db: Db): Columns {
  const names = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
    .pluck()
    .all() as string[];
  const columns = (name: string): string[] =>
    (db.pragma(`table_info(${JSON.stringify(name)})`) as { name: string }[]).map((column) => column.name);
  return new Map(names.map((name) => [name, columns(name)]));
}

/**
 * After migrating: every table and column the migrations make must be there. A recorded migration
 * whose table was dropped would otherwise start a server that fails every call.
 */
export function checkSchema(db: Db, path: string): void {
  const actual = tablesOf(db);
  for (const [table, columns] of expectedSchema()) {
    const present = actual.get(table);
    if (present === undefined) {
      throw damaged(
        path,
        'schema',
        `table ${table} is missing although schema_migrations records the migration that creates it`,
      );
    }
    const missing = columns.filter((column) => !present.includes(column));
    if (missing.length > 0) throw damaged(path, 'schema', `table ${table} lacks column(s) ${missing.join(', ')}`);
  }
}
