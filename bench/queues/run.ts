/**
 * Figure 12's workload, one system per process (bench/figures/queues.ts spawns it):
 *
 *   node bench/queues/run.ts --system pg-boss|graphile-worker|engine|http --url URL [--schema S]
 *        --producers P --jobs N [--warmup W]
 *
 * P producers, each in a closed loop: create a job, wait until it is done, read its result, next.
 * A job is a 0 ms handler. In-process systems (the libraries, our engine) wait for their handler
 * to return (an in-process signal, the same for every system), then read the result until the
 * system reports it done (the completion commits just after the handler returns), 1 ms apart;
 * over HTTP the client reads `tasks/get` from the create on, 1 ms apart. Measured: jobs per second over the whole run (first
 * create to last result read), add-to-start (from the call that creates a job to its handler's
 * start) and add-to-result, p50 and p99. Prints one JSON line on stdout.
 */
import { parseArgs } from 'node:util';
import { percentile, wallMs } from '../lib/stats.js';
import { openEngine } from './engine.js';
import { openGraphileWorker } from './graphile-worker.js';
import { openHttp } from './http.js';
import { openPgBoss } from './pg-boss.js';
import type { QueueSystem } from './system.js';

export interface QueueRun {
  readonly jobsPerSecond: number;
  readonly addToStartP50: number;
  readonly addToStartP99: number;
  readonly addToResultP50: number;
  /** Result reads per job (1 = the first read found it done). */
  readonly readsPerJob: number;
}

export type SystemId = 'pg-boss' | 'graphile-worker' | 'engine' | 'http';

interface Pending {
  startedAt?: number;
  ended: Promise<void>;
  end: () => void;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      system: { type: 'string' },
      url: { type: 'string' },
      schema: { type: 'string', default: 'bench_queue' },
      producers: { type: 'string', default: '1' },
      jobs: { type: 'string', default: '200' },
      warmup: { type: 'string', default: '50' },
    },
  });
  const system = values.system as SystemId;
  const url = values.url;
  if (url === undefined) throw new Error('--url is required');
  const producers = Number(values.producers);

  const pending = new Map<string, Pending>();
  const track = (key: string): Pending => {
    let end: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const entry: Pending = { ended, end };
    pending.set(key, entry);
    return entry;
  };
  const config = {
    url,
    schema: values.schema,
    started: (key: string) => {
      const entry = pending.get(key);
      if (entry !== undefined) entry.startedAt = wallMs();
    },
    ended: (key: string) => pending.get(key)?.end(),
  };
  const inProcess = system !== 'http';
  const queue: QueueSystem =
    system === 'pg-boss'
      ? await openPgBoss(config)
      : system === 'graphile-worker'
        ? await openGraphileWorker(config)
        : system === 'engine'
          ? await openEngine(config)
          : openHttp(url);

  let reads = 0;
  const addToStart: number[] = [];
  const addToResult: number[] = [];
  const job = async (key: string, measured: boolean): Promise<void> => {
    const entry = track(key);
    const t0 = wallMs();
    const handle = await queue.add(key);
    if (inProcess) await entry.ended;
    let outcome: number | null | undefined;
    for (;;) {
      outcome = await queue.result(handle);
      if (measured) reads += 1;
      if (outcome !== undefined) break;
      // Not done yet: look again 1 ms later (every system alike), so a completion committed a
      // little after its handler returned is not chased by a read per round trip.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const done = wallMs();
    pending.delete(key);
    if (!measured) return;
    const startedAt = inProcess ? entry.startedAt : (outcome ?? undefined);
    if (startedAt === undefined) throw new Error(`job ${key} reported no start`);
    addToStart.push(startedAt - t0);
    addToResult.push(done - t0);
  };
  const phase = async (label: string, count: number, measured: boolean): Promise<number> => {
    const started = wallMs();
    let next = 0;
    await Promise.all(
      Array.from({ length: producers }, async () => {
        while (next < count) {
          const n = next;
          next += 1;
          await job(`${label}-${n}`, measured);
        }
      }),
    );
    return wallMs() - started;
  };
  try {
    await phase('warmup', Number(values.warmup), false);
    const jobs = Number(values.jobs);
    const ms = await phase('job', jobs, true);
    const run: QueueRun = {
      jobsPerSecond: jobs / (ms / 1000),
      addToStartP50: percentile(addToStart, 50),
      addToStartP99: percentile(addToStart, 99),
      addToResultP50: percentile(addToResult, 50),
      readsPerJob: reads / jobs,
    };
    process.stdout.write(`${JSON.stringify(run)}\n`);
  } finally {
    await queue.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `queue run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
