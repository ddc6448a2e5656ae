import { TerminusError } from '../../core/errors.js';
import { TASK_EVENT_BOUND_COLUMNS, TASK_EVENT_COLUMNS, TASK_LOG_COLUMNS, TASK_ROW_COLUMNS } from '../columns.js';
import type { Db, Sql } from './db.js';

/** The columns every query of this store reads or writes, by table (migrations 001, 003, 005 and 006). */
const EXPECTED: Readonly<Record<'tasks' | 'keys' | 'logs' | 'events', readonly string[]>> = {
  tasks: [...TASK_ROW_COLUMNS, ...TASK_LOG_COLUMNS, ...TASK_EVENT_COLUMNS, ...TASK_EVENT_BOUND_COLUMNS],
  keys: ['owner', 'submission_key', 'task_id', 'created_at'],
  logs: ['task_id', 'seq', 'epoch', 'at', 'stream', 'text', 'fields', 'bytes'],
  events: ['task_id', 'seq', 'at', 'kind', 'data', 'log_seq'],
};

const COLUMNS: Sql = () => `
SELECT table_name, column_name FROM information_schema.columns
WHERE table_schema = $1 AND table_name = ANY($2::text[])`;

/**
 * After migrating: the tables and columns this store uses must be there (issue 12 item 10). A
 * recorded migration whose table was dropped would otherwise start a node that fails every call.
 * Rejects `storage_damaged` naming the schema and what is missing.
 */
export async function checkSchema(db: Db, schema: string): Promise<void> {
  const names = { tasks: 'tasks', keys: 'submission_keys', logs: 'task_logs', events: 'task_events' } as const;
  const result = await db.query<{ table_name: string; column_name: string }>('checkSchema', COLUMNS, [
    schema,
    Object.values(names),
  ]);
  for (const [table, columns] of Object.entries(EXPECTED) as [
    'tasks' | 'keys' | 'logs' | 'events',
    readonly string[],
  ][]) {
    const present = new Set(result.rows.filter((r) => r.table_name === names[table]).map((r) => r.column_name));
    const where = `PostgreSQL schema ${schema}`;
    if (present.size === 0) {
      throw new TerminusError(
        'storage_damaged',
        `${where}: table ${names[table]} is missing although schema_migrations records the migration that creates it`,
        { details: { schema } },
      );
    }
    const missing = columns.filter((c) => !present.has(c));
    if (missing.length > 0) {
      throw new TerminusError(
        'storage_damaged',
        `${where}: table ${names[table]} lacks column(s) ${missing.join(', ')}`,
        { details: { schema } },
      );
    }
  }
}
