import type { Db as SchemaDb, SchemaTables, Sql as SchemaSql, Tx as SchemaTx } from '../../sql/pg-db.js';
import { quoteIdent } from '../../sql/pg-db.js';

/** The task store's schema-qualified, quoted table names; every SQL literal is a function of these. */
export interface Tables extends SchemaTables {
  readonly tasks: string;
  readonly keys: string;
  readonly logs: string;
  readonly events: string;
  readonly outbox: string;
  readonly attempts: string;
}

/** A SQL literal of the task store, written against its table set. */
export type Sql = SchemaSql<Tables>;
export type Tx = SchemaTx<Tables>;
export type Db = SchemaDb<Tables>;

export function tablesOf(schema: string): Tables {
  const s = quoteIdent(schema);
  return {
    schemaName: schema,
    schema: s,
    tasks: `${s}.tasks`,
    keys: `${s}.submission_keys`,
    logs: `${s}.task_logs`,
    events: `${s}.task_events`,
    outbox: `${s}.webhook_outbox`,
    attempts: `${s}.webhook_attempts`,
    migrations: `${s}.schema_migrations`,
  };
}
