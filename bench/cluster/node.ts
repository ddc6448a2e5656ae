/**
 * One node of figure 13 (bench/figures/cluster.ts): an engine with a runner on a shared PostgreSQL
 * schema (`openPostgresBackend`: the store and LISTEN/NOTIFY), serving nothing, running
 * `bench_job {ms}`. It prints `ready` once it claims, then one line per handler start,
 * `start <taskId> <epoch> <wall ms>`, so the figure counts every run (a double claim is a task
 * started twice at one epoch, or on two nodes without a lease expiring between). SIGTERM stops it
 * gracefully; the figure kills one with SIGKILL to measure the re-claim.
 *
 *   node bench/cluster/node.ts --url URL --schema S --node-id ID [--concurrency 16] [--lease-ms 10000]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { silentLogger } from '../../src/core/ports.js';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { openPostgresBackend } from '../../src/store/postgres/index.js';
import { wallMs } from '../lib/stats.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    schema: { type: 'string' },
    'node-id': { type: 'string' },
    concurrency: { type: 'string', default: '16' },
    'lease-ms': { type: 'string', default: '10000' },
  },
});
if (values.url === undefined || values.schema === undefined || values['node-id'] === undefined) {
  throw new Error('--url, --schema and --node-id are required');
}
const nodeId = values['node-id'];
const leaseMs = Number(values['lease-ms']);

const out: string[] = [];
const flush = (): void => {
  if (out.length > 0) process.stdout.write(`${out.splice(0).join('\n')}\n`);
};
const job = defineTaskTool({
  name: 'bench_job',
  description: 'Waits `ms` milliseconds.',
  inputSchema: z.object({ ms: z.number().min(0) }),
  handler: async ({ ms }, ctx) => {
    // One write per event-loop turn, however many handlers start in it.
    if (out.length === 0) setImmediate(flush);
    out.push(`start ${ctx.taskId} ${ctx.epoch} ${wallMs().toFixed(1)}`);
    if (ms > 0) await sleep(ms, undefined, { signal: ctx.signal });
    return { content: [{ type: 'text', text: nodeId }] };
  },
});

const backend = await openPostgresBackend({
  connectionString: values.url,
  schema: values.schema,
  applicationName: `bench-${nodeId}`,
  logger: silentLogger,
});
const engine = createEngine({
  store: backend.store,
  events: backend.events,
  tools: [job],
  clock: systemClock,
  ids: systemIds,
  random: systemRandom,
  logger: silentLogger,
  nodeId,
  concurrency: Number(values.concurrency),
  leaseMs,
  heartbeatMs: Math.floor(leaseMs / 3),
});
engine.start();
process.stdout.write('ready\n');

const stop = (): void => {
  engine
    .stop()
    .then(() => backend.close())
    .then(
      () => {
        flush();
        process.exit(0);
      },
      () => process.exit(1),
    );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
