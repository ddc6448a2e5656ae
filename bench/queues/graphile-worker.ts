/**
 * graphile-worker 0.18 with the settings of its own performance page (worker.graphile.org/docs/
 * performance): 24 concurrent jobs, a pool of 25, the local queue (jobs fetched 500 at a time and
 * handed out in process), job completions and failures batched (`completeJobBatchDelay: 0`,
 * `failJobBatchDelay: 0`). New jobs wake the worker by LISTEN/NOTIFY (always on). Jobs are added one
 * at a time with the runner's `addJob` (unbatched, as a producer adds them). graphile-worker keeps
 * no result: a job succeeded once its row is gone, so the result read is that check.
 */
import { Logger, run, type Runner } from 'graphile-worker';
import type { OpenSystem } from './system.js';
import pg from 'pg';

export const GRAPHILE_SETTINGS = { concurrency: 24, maxPoolSize: 25, localQueue: 500 } as const;

const silent = new Logger(() => () => undefined);

export const openGraphileWorker: OpenSystem = async (config) => {
  const runner: Runner = await run({
    connectionString: config.url,
    schema: config.schema,
    concurrency: GRAPHILE_SETTINGS.concurrency,
    maxPoolSize: GRAPHILE_SETTINGS.maxPoolSize,
    noHandleSignals: true,
    logger: silent,
    crontab: '',
    preset: {
      worker: {
        localQueue: { size: GRAPHILE_SETTINGS.localQueue },
        completeJobBatchDelay: 0,
        failJobBatchDelay: 0,
      },
    },
    taskList: {
      bench: async (payload) => {
        const { key } = payload as { key: string };
        config.started(key);
        config.ended(key);
      },
    },
  });
  // Reads go through a pool of their own, as a separate reader would.
  const reader = new pg.Pool({ connectionString: config.url, max: 4 });
  const present = `SELECT 1 FROM "${config.schema}"._private_jobs WHERE id = $1`;
  return {
    async add(key) {
      const job = await runner.addJob('bench', { key });
      return String(job.id);
    },
    async result(id) {
      const rows = await reader.query(present, [id]);
      return rows.rowCount === 0 ? null : undefined;
    },
    async stop() {
      await runner.stop();
      await reader.end();
    },
  };
};
