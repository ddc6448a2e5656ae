import { createHash } from 'node:crypto';
import type { CustomTypesConfig, Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { TerminusError } from '../core/errors.js';
import { isRetryableConflict, mapError } from './pg-errors.js';

/** What every schema-qualified table set has: the ledger has its own, beside the store's. */
export interface SchemaTables {
  /** The schema's name as given (unquoted), for catalogue look-ups. */
  readonly schemaName: string;
  /** The schema's quoted identifier, for SQL text. */
  readonly schema: string;
  readonly migrations: string;
}

/** A SQL literal written against a table set, so one store can live in any schema. */
export type Sql<T extends SchemaTables> = (t: T) => string;

/** How a statement's rows come back: objects keyed by column (default), or arrays in select order. */
export interface QueryOptions {
  /** `'array'`: each row is its values in select order (no object built per row; see `store/postgres/row.ts`). */
  readonly rowMode?: 'array';
  /** How column text becomes values (node-postgres `types`); default: the driver's parsers. */
  readonly types?: CustomTypesConfig;
}

export interface Tx<T extends SchemaTables> {
  query<R extends QueryResultRow>(
    sql: Sql<T>,
    params: readonly unknown[],
    options?: QueryOptions,
  ): Promise<QueryResult<R>>;
}

export interface Db<T extends SchemaTables> {
  readonly pool: Pool;
  readonly tables: T;
  /** One statement, autocommit. Errors come out as `TerminusError` (see `mapError`). */
  query<R extends QueryResultRow>(
    where: string,
    sql: Sql<T>,
    params: readonly unknown[],
    options?: QueryOptions,
  ): Promise<QueryResult<R>>;
  /**
   * Runs `fn` in one transaction on one pooled client. Serialization failures and deadlocks are
   * retried (up to 5 runs); a `TerminusError` thrown by `fn` rolls back and passes through.
   */
  transaction<R>(where: string, fn: (tx: Tx<T>) => Promise<R>, isolation?: 'serializable'): Promise<R>;
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

const MAX_RUNS = 5;

export interface DbOptions {
  /**
   * Statements with parameters are prepared once per connection under a name derived from their
   * text (node-postgres named statements), so PostgreSQL parses and plans each text once per
   * connection instead of on every call. Only for statement sets that never read `*`: a column a
   * newer node's migration adds would change a prepared `SELECT *`'s result type, which PostgreSQL
   * refuses ("cached plan must not change result type"). Parameterless statements (migrations,
   * several commands in one text) are never prepared.
   */
  readonly prepared?: boolean;
}

interface Text {
  readonly text: string;
  readonly name: string;
}

export function createDb<T extends SchemaTables>(
  pool: Pool,
  tables: T,
  isClosed: () => boolean,
  options: DbOptions = {},
): Db<T> {
  const texts = new Map<Sql<T>, Text>();
  const config = (sql: Sql<T>, params: readonly unknown[], query: QueryOptions | undefined): QueryConfig => {
    let t = texts.get(sql);
    if (t === undefined) {
      const text = sql(tables);
      t = { text, name: `tm_${createHash('sha1').update(text).digest('hex').slice(0, 24)}` };
      texts.set(sql, t);
    }
    return {
      text: t.text,
      values: params as unknown[],
      ...(options.prepared === true && params.length > 0 ? { name: t.name } : {}),
      ...(query?.rowMode === undefined ? {} : { rowMode: query.rowMode }),
      ...(query?.types === undefined ? {} : { types: query.types }),
    };
  };
  const open = (): void => {
    if (isClosed()) throw new TerminusError('unavailable', 'task store is closed');
  };

  return {
    pool,
    tables,
    async query(where, sql, params, query) {
      open();
      try {
        return await pool.query(config(sql, params, query));
      } catch (error) {
        throw mapError(error, where);
      }
    },
    async transaction(where, fn, isolation) {
      open();
      for (let run = 1; ; run++) {
        let client: PoolClient | undefined;
        try {
          client = await pool.connect();
          const c = client;
          await c.query(isolation === 'serializable' ? 'BEGIN ISOLATION LEVEL SERIALIZABLE' : 'BEGIN');
          const result = await fn({ query: (sql, params, query) => c.query(config(sql, params, query)) });
          await c.query('COMMIT');
          c.release();
          return result;
        } catch (error) {
          if (client !== undefined) await rollback(client, error);
          if (run < MAX_RUNS && isRetryableConflict(error)) continue;
          throw mapError(error, where);
        }
      }
    },
  };
}

/** Rolls back and returns the client; a client whose connection broke is destroyed, not reused. */
async function rollback(client: PoolClient, cause: unknown): Promise<void> {
  try {
    await client.query('ROLLBACK');
    client.release();
  } catch {
    client.release(cause instanceof Error ? cause : true);
  }
}
