/**
 * pg-boss 12, set up as its documentation says for low latency and throughput: `useListenNotify`
 * on the instance and `notify: true` on the queue (a created job wakes the workers at once; polling
 * is the 30 s backstop), workers fetching batches (`batchSize`) and fetching again at once while
 * batches come back full (`burstWhenBatchFull`), `localConcurrency` workers in this process,
 * `perJobResults` so each job of a batch is completed with its own output (without it a batch
 * stores no output at all). `pollingIntervalSeconds` is its minimum, 0.5. Cron scheduling is off
 * (`schedule: false`): this workload has none. The result is read with `getJobById`.
 */
import { PgBoss } from 'pg-boss';
import type { OpenSystem } from './system.js';

const QUEUE = 'bench';

/**
 * The best of the settings tried at 16 producers before the figure was written (batchSize x
 * localConcurrency: 16x1, 16x2, 1x16, 4x4, 8x4, 32x1, 50x1; see docs/benchmarks.md, figure 12).
 */
export const PG_BOSS_SETTINGS = { batchSize: 16, localConcurrency: 1, max: 25 } as const;

export const openPgBoss: OpenSystem = async (config) => {
  const boss = new PgBoss({
    connectionString: config.url,
    schema: config.schema,
    useListenNotify: true,
    schedule: false,
    max: PG_BOSS_SETTINGS.max,
  });
  boss.on('error', (error: unknown) => process.stderr.write(`pg-boss: ${String(error)}\n`));
  await boss.start();
  await boss.createQueue(QUEUE, { notify: true });
  await boss.work<{ key: string }>(
    QUEUE,
    {
      batchSize: PG_BOSS_SETTINGS.batchSize,
      localConcurrency: PG_BOSS_SETTINGS.localConcurrency,
      pollingIntervalSeconds: 0.5,
      burstWhenBatchFull: true,
      perJobResults: true,
    },
    async (jobs) =>
      jobs.map((job) => {
        config.started(job.data.key);
        config.ended(job.data.key);
        return { id: job.id, status: 'completed' as const, output: { ok: true } };
      }),
  );
  return {
    async add(key) {
      const id = await boss.send(QUEUE, { key });
      if (id === null) throw new Error('pg-boss did not create the job');
      return id;
    },
    async result(id) {
      const job = await boss.getJobById(QUEUE, id);
      if (job?.state === 'completed') return null;
      if (job?.state === 'failed') throw new Error(`pg-boss job ${id} failed`);
      return undefined;
    },
    stop: () => boss.stop({ graceful: false, close: true }),
  };
};
