import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { DEFAULT_EVENT_BOUND } from '../core/task-events.js';
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import { createEngine } from '../runner/engine.js';
import type { TaskToolDefinition } from '../runner/tool.js';
import { clusterTools } from '../tools/cluster/index.js';
import { conformanceTools } from '../tools/conformance/index.js';
import { demoTools } from '../tools/demo/index.js';
import { hostileTools } from '../tools/hostile/index.js';
import { defaultNodeId, openStoreOrExit } from './open-store.js';
import { exitOnSignals } from './signals.js';
import { addWorkerOptions, checkWorkerFlags, workerEngineOptions, type WorkerFlags } from './handler-workers.js';
import { lifecycleLog, lineLogger } from '../telemetry/log.js';

interface WorkerCommandFlags extends WorkerFlags {
  readonly db: string;
  readonly nodeId: string;
  readonly pgSchema?: string;
  readonly fixtures?: 'conformance' | 'cluster' | 'hostile';
  readonly verbose: boolean;
  readonly maxTaskEvents: number;
}

/**
 * `terminus worker`: only the runner (claims, handlers, heartbeats, TTL sweep) on the store a
 * `terminus serve --no-runner` answers from, so handlers run off the serving process's event loop.
 * Nothing crosses between them but the store: a worker learns of a cancel or an input reply from
 * its heartbeat's read of the task (every lease / 3, 3.3 s by default; PostgreSQL NOTIFY makes it
 * immediate), a dead worker's tasks are re-claimed at epoch + 1 once its lease expires (10 s).
 * stdout carries one line once it runs; logs go to stderr.
 */
export function registerWorker(program: Command): void {
  const command = program
    .command('worker')
    .description('Run the durable tools of a store (no serving): pair with `terminus serve --no-runner`')
    .option(
      '--db <file|url>',
      'SQLite database file, or postgres:// URL (the one the server uses)',
      './.terminus/terminus.db',
    )
    .option('--node-id <id>', 'this worker: lease owner (unique per process)', defaultNodeId())
    .option('--pg-schema <name>', 'PostgreSQL schema of the tables (the server’s)')
    .addOption(
      new Option('--fixtures <set>', 'run a fixture tool set instead of the demo tools (the server’s)').choices([
        'conformance',
        'cluster',
        'hostile',
      ]),
    )
    .option('--verbose', 'debug logs on stderr', false)
    .option(
      '--max-task-events <n>',
      'progress and log events one task keeps, its newest (the server’s --max-task-events)',
      (value: string) => {
        const n = Number(value);
        if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('not a positive integer');
        return n;
      },
      DEFAULT_EVENT_BOUND.maxKept,
    );
  addWorkerOptions(command, 'main thread').action((flags: WorkerCommandFlags) => work(flags));
}

async function work(flags: WorkerCommandFlags): Promise<void> {
  checkWorkerFlags(flags);
  const logger = lineLogger({
    format: 'text',
    debug: flags.verbose,
    now: () => Date.now(),
    write: (line) => process.stderr.write(line),
  });
  const opened = await openStoreOrExit({
    db: flags.db,
    nodeId: flags.nodeId,
    pgSchema: flags.pgSchema,
    logger,
    eventBound: { maxKept: flags.maxTaskEvents },
  });
  // The same tool sets as `terminus serve` picks: a worker runs what the server accepts.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tools keep their own Args types
  let tools: readonly TaskToolDefinition<any>[] = demoTools({ dataDir: opened.dataDir });
  if (flags.fixtures === 'conformance') tools = conformanceTools;
  if (flags.fixtures === 'cluster') tools = clusterTools({ dataDir: opened.dataDir });
  if (flags.fixtures === 'hostile') tools = hostileTools;
  const engine = createEngine({
    store: opened.store,
    events: opened.events,
    nodeId: flags.nodeId,
    tools,
    clock: systemClock,
    ids: systemIds,
    random: systemRandom,
    logger,
    observer: lifecycleLog({ logger, payloads: false }),
    ...workerEngineOptions(flags, flags.fixtures ?? 'demo', opened.dataDir),
  });
  engine.start();
  process.stdout.write(`terminus worker ${flags.nodeId} running ${tools.length} tools (db ${opened.label})\n`);

  exitOnSignals(logger, 'running tasks are released and resume on the next claim', async () => {
    await engine.stop();
    await opened.close();
  });
}
