import pg from 'pg';
import type { Pool } from 'pg';
import { TerminusError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { describe, sqlState } from './pg-errors.js';

/** The oldest server we test against and support (generated columns, `hashtextextended`, ...). */
export const MIN_SERVER_VERSION = 13;

export interface ConnectOptions {
  /** `postgres://user:password@host:port/database`; used when no `pool` is given. */
  readonly connectionString?: string;
  /** A pool the caller owns: never ended by us, and its `'error'` events are the caller's to handle. */
  readonly pool?: Pool;
  /** Size of the pool we make from `connectionString`. Default 10. */
  readonly maxConnections?: number;
  /** How long to wait for a connection before failing with `unavailable`. Default 10 000 ms. */
  readonly connectTimeoutMs?: number;
  /** `application_name` of our connections (shown in `pg_stat_activity`); e.g. the node's name. */
  readonly applicationName?: string;
  readonly logger?: Logger;
}

export interface Connection {
  readonly pool: Pool;
  /** True when we made the pool and so must end it. */
  readonly owned: boolean;
  /** `host:port/database`, with no credentials, for messages. */
  readonly target: string;
}

/** Makes (or adopts) the pool; does not connect yet. */
export function poolFor(options: ConnectOptions, defaultApplicationName: string): Connection {
  if (options.pool !== undefined) {
    const o = options.pool.options;
    return { pool: options.pool, owned: false, target: targetOf(o.connectionString, o.host, o.port, o.database) };
  }
  if (options.connectionString === undefined || options.connectionString === '') {
    throw new TerminusError('invalid_argument', 'PostgreSQL needs a connectionString or a pool');
  }
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    application_name: options.applicationName ?? defaultApplicationName,
  });
  const target = targetOf(options.connectionString);
  // An idle client whose server went away emits 'error' on the pool; unhandled, it would kill the
  // process. The pool drops that client and the next query gets a fresh one.
  pool.on('error', (error) =>
    options.logger?.warn('postgres: idle connection lost', { target, error: describe(error) }),
  );
  return { pool, owned: true, target };
}

function targetOf(connectionString?: string, host?: string, port?: number, database?: string): string {
  if (connectionString !== undefined) {
    try {
      const url = new URL(connectionString);
      return `${url.hostname}${url.port === '' ? '' : `:${url.port}`}${url.pathname}`;
    } catch {
      return 'the configured database';
    }
  }
  return `${host ?? 'localhost'}:${port ?? 5432}/${database ?? ''}`;
}

const VERSION = `SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS text`;

/**
 * The first round trip: proves the server is reachable with these credentials and supported.
 * Rejects `unavailable` (with the driver's error as `cause`) when it cannot be reached, and
 * `invalid_argument` when its major version is below 13.
 */
export async function checkServer(connection: Connection): Promise<{ readonly version: string }> {
  let row: { num: number; text: string } | undefined;
  try {
    row = (await connection.pool.query<{ num: number; text: string }>(VERSION)).rows[0];
  } catch (error) {
    const code = sqlState(error);
    throw new TerminusError(
      'unavailable',
      `cannot reach PostgreSQL at ${connection.target}: ${describe(error)}` +
        (code === '28P01' || code === '28000' ? ' (check the user and password)' : '') +
        (code === '3D000' ? ' (create the database first)' : ''),
      { cause: error, details: { target: connection.target } },
    );
  }
  const num = row?.num ?? 0;
  if (num < MIN_SERVER_VERSION * 10_000) {
    throw new TerminusError(
      'invalid_argument',
      `PostgreSQL ${row?.text ?? 'of unknown version'} at ${connection.target} is not supported: ` +
        `mcp-terminus needs ${MIN_SERVER_VERSION} or newer`,
      { details: { target: connection.target, serverVersion: row?.text, serverVersionNum: num } },
    );
  }
  return { version: row?.text ?? String(num) };
}
