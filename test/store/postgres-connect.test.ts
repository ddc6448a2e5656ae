import { createServer } from 'node:net';
import type { Pool } from 'pg';
import { describe, expect, it } from 'vitest';
import { isTerminusError, type TerminusError } from '../../src/core/errors.js';
import { mapError } from '../../src/sql/pg-errors.js';
import { checkServer } from '../../src/sql/pg-pool.js';
import { openPostgresTaskStore } from '../../src/store/postgres/index.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, PG_URL } from './postgres-fixture.js';

async function rejection(promise: Promise<unknown>): Promise<TerminusError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isTerminusError(error), `expected a TerminusError, got ${String(error)}`).toBe(true);
  return error as TerminusError;
}

/** A port on 127.0.0.1 nobody listens on: bound, closed, then used. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A stand-in pool whose server reports `num` as its version. */
function poolReporting(num: number, text: string): Pool {
  return {
    options: { host: 'fake', port: 5432, database: 'db' },
    query: async () => ({ rows: [{ num, text }] }),
  } as unknown as Pool;
}

describe('PostgreSQL connection errors', () => {
  it('an unreachable server rejects unavailable, naming the target and the cause, without the password', async () => {
    const port = await deadPort();
    const error = await rejection(
      openPostgresTaskStore({ connectionString: `postgres://u:s3cret@127.0.0.1:${port}/nope`, connectTimeoutMs: 2000 }),
    );
    expect(error.code).toBe('unavailable');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain(`cannot reach PostgreSQL at 127.0.0.1:${port}/nope`);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).not.toContain('s3cret');
    expect(error.cause).toBeDefined();
  });

  it('an unresolvable host rejects unavailable', async () => {
    const error = await rejection(
      openPostgresTaskStore({ connectionString: 'postgres://u@no-such-host.invalid/db', connectTimeoutMs: 2000 }),
    );
    expect(error.code).toBe('unavailable');
    expect(error.message).toContain('no-such-host.invalid');
  });

  it('a server older than 13 is refused with invalid_argument naming its version', async () => {
    const error = await rejection(checkServer({ pool: poolReporting(120_017, '12.17'), owned: false, target: 't' }));
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toContain('PostgreSQL 12.17');
    expect(error.message).toContain('needs 13 or newer');
    await expect(checkServer({ pool: poolReporting(130_000, '13.0'), owned: false, target: 't' })).resolves.toEqual({
      version: '13.0',
    });
  });

  it('driver errors map to codes: connection loss is unavailable (retryable), the rest internal', () => {
    const codeOf = (e: unknown) => mapError(e, 'test').code;
    expect(codeOf(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe('unavailable');
    expect(codeOf(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe('unavailable');
    expect(codeOf(Object.assign(new Error('too many clients'), { code: '53300' }))).toBe('unavailable');
    expect(codeOf(new Error('Connection terminated unexpectedly'))).toBe('unavailable');
    expect(codeOf(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe('internal');
    expect(codeOf(Object.assign(new Error('invalid byte sequence'), { code: '22021' }))).toBe('invalid_argument');
    expect(mapError(new Error('x'), 'claim').message).toContain('(claim)');
  });

  it('neither a connection string nor a pool is invalid_argument', async () => {
    const error = await rejection(openPostgresTaskStore({}));
    expect(error.code).toBe('invalid_argument');
  });

  if (PG_URL === '') {
    failWithoutDatabase();
  } else {
    it('a wrong password rejects unavailable and says to check the credentials', async () => {
      const url = new URL(PG_URL);
      url.password = 'wrong-password';
      const error = await rejection(openPostgresTaskStore({ connectionString: url.toString(), schema: freshSchema() }));
      expect(error.code).toBe('unavailable');
      expect(error.message).toContain('password authentication failed');
      expect(error.message).toContain('check the user and password');
      expect(error.message).not.toContain('wrong-password');
    });

    it('after the server drops every connection (a restart, a failover) the store reconnects', async () => {
      const admin = adminPool();
      const schema = freshSchema('drop');
      const applicationName = `terminus-drop-${schema}`;
      const store = await openPostgresTaskStore({ connectionString: PG_URL, schema, applicationName });
      try {
        expect(await store.get('alice', 'none', 0)).toBeNull();
        const killed = await admin.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
          [applicationName],
        );
        expect(killed.rowCount).toBeGreaterThan(0);
        // The pool learns of the loss from the socket; give it a moment, then it uses a new connection.
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(await store.get('alice', 'none', 0)).toBeNull();
      } finally {
        await store.close();
        await dropSchema(admin, schema);
        await admin.end();
      }
    });

    it('a database that does not exist rejects unavailable and says so', async () => {
      const url = new URL(PG_URL);
      url.pathname = '/no_such_database';
      const error = await rejection(openPostgresTaskStore({ connectionString: url.toString(), schema: freshSchema() }));
      expect(error.code).toBe('unavailable');
      expect(error.message).toContain('no_such_database');
      expect(error.message).toContain('create the database first');
    });
  }
});
