/**
 * The floor on PostgreSQL (bench/servers/floor.ts --pg), the limit the PostgreSQL rows of the bench
 * are read against, answers what the figures ask of it: a blocking `tasks/result` right after each
 * create, a few hundred times in a row. Its reads answer after a round trip, so a completion can
 * land while a result read is on its way; a floor that listened only after its read missed that
 * wake-up and never answered (the full bench hung in figure 5). Structure only: no timing asserted.
 */
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { submitTask, taskResult, getStatus } from '../../bench/client/tasks.js';
import { withServer } from '../../bench/lib/proc.js';
import { failWithoutDatabase, PG_URL } from '../store/postgres-fixture.js';

const SCHEMA = `floor_test_${process.pid}`;
const CALLS = 300;

/** Rejects when `promise` has not settled within `ms` (a hang becomes a failure naming the call). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

if (PG_URL === '') {
  describe('the floor on PostgreSQL', failWithoutDatabase);
} else {
  afterAll(async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await client.end();
  });

  describe('the floor on PostgreSQL', () => {
    it(`answers ${CALLS} blocking tasks/result calls, each right after its create`, { timeout: 180_000 }, async () => {
      const spec = { entry: 'bench/servers/floor.ts', args: ['--pg', PG_URL, '--schema', SCHEMA, '--seed', '3'] };
      const answered = await withServer(spec, 'stdio', async (server) => {
        const client = await server.connect();
        expect(await getStatus(client, 'seed-0')).toBe('working');
        let count = 0;
        for (let i = 0; i < CALLS; i += 1) {
          const { taskId } = await submitTask(client, 'bench_sleep', { ms: 0 });
          const result = await within(taskResult(client, taskId), 10_000, `tasks/result of call ${i + 1}`);
          expect(result.content).toEqual([{ type: 'text', text: 'slept 0 ms' }]);
          count += 1;
        }
        await client.close();
        return count;
      });
      expect(answered).toBe(CALLS);
    });
  });
}
