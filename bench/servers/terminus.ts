/**
 * The mcp-terminus server the harness measures: the library as a user wires it (SQLite with
 * `synchronous=FULL`, or PostgreSQL; every wire of the registry), serving one bench tool.
 *
 *   node --import tsx bench/servers/terminus.ts --transport http|stdio --db FILE|postgres://...
 *        [--schema NAME] [--poll-ms 100] [--concurrency 256] [--commit-log FILE] [--no-fast-path]
 *
 * - `bench_sleep {ms}` (taskSupport optional): waits `ms` (aborted on cancel), returns a text block.
 *   Run as a task when the call asks for one, inline otherwise (our B1 counterpart).
 * - `bench_stamp {key}`: answers at once with the instant it started (wall-clock ms, as text): the
 *   job of figure 12, whose client reads the start back from the result.
 * - HTTP binds 127.0.0.1 on a free port and prints `listening <url>`; callers send
 *   `Authorization: Bearer bench` so tasks belong to one principal across sessions and restarts.
 * - `--commit-log FILE` appends `{"id","t"}` when a terminal write has committed (`finish` resolved),
 *   `t` in wall-clock ms with sub-ms resolution: the start of completion-to-acceptance.
 * - `--no-fast-path` sends every HTTP request through the SDK (`serveHttp({ fastPath: false })`).
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { silentLogger } from '../../src/core/ports.js';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { openPostgresTaskStore } from '../../src/postgres.js';
import { createEngine } from '../../src/runner/engine.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { wallMs } from '../lib/stats.js';

const { values } = parseArgs({
  options: {
    transport: { type: 'string', default: 'http' },
    db: { type: 'string' },
    schema: { type: 'string' },
    'poll-ms': { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '256' },
    'commit-log': { type: 'string' },
    'commit-delay-ms': { type: 'string' },
    'no-fast-path': { type: 'boolean', default: false },
  },
});
if (values.db === undefined) throw new Error('--db is required');
const pollIntervalMs = Number(values['poll-ms']);
const commitLog = values['commit-log'];

const base: TaskStore = values.db.startsWith('postgres')
  ? await openPostgresTaskStore({
      connectionString: values.db,
      ...(values.schema === undefined ? {} : { schema: values.schema }),
    })
  : await openSqliteTaskStore({
      path: values.db,
      ...(values['commit-delay-ms'] === undefined ? {} : { commitDelayMs: Number(values['commit-delay-ms']) }),
    });

/** The store, with the commit instant of every terminal write logged (the write has resolved: durable). */
const store: TaskStore =
  commitLog === undefined
    ? base
    : {
        ...base,
        finish: async (fence, outcome, now) => {
          const answer = await base.finish(fence, outcome, now);
          appendFileSync(commitLog, `${JSON.stringify({ id: fence.taskId, t: wallMs() })}\n`);
          return answer;
        },
      };

const benchSleep = defineTaskTool({
  name: 'bench_sleep',
  description: 'Waits `ms` milliseconds, then answers.',
  inputSchema: z.object({ ms: z.number().min(0) }),
  taskSupport: 'optional',
  pollIntervalMs,
  handler: async ({ ms }, ctx) => {
    if (ms > 0) await sleep(ms, undefined, { signal: ctx.signal });
    return { content: [{ type: 'text', text: `slept ${ms} ms` }] };
  },
});

const benchStamp = defineTaskTool({
  name: 'bench_stamp',
  description: 'Answers at once with the instant it started.',
  inputSchema: z.object({ key: z.string() }),
  taskSupport: 'optional',
  pollIntervalMs,
  handler: async () => ({ content: [{ type: 'text', text: String(wallMs()) }] }),
});

// The bench measures the engine and the wires, not the per-caller limits: every bench client is one
// principal, so the default limits (100 creates/s, 10,000 open tasks) would cap the figures.
const NO_RATE_LIMITS = { createsPerMinute: 0, pollsPerMinute: 0 } as const;
const registry = createWireRegistry({ limits: NO_RATE_LIMITS });
const engine = createEngine({
  store,
  tools: [benchSleep, benchStamp],
  clock: systemClock,
  ids: systemIds,
  random: systemRandom,
  logger: silentLogger,
  concurrency: Number(values.concurrency),
  maxLiveTasksPerOwner: 0,
});
engine.start();
const server = createTerminusServer({ engine: registry.guard(engine), wires: registry.adapters, name: 'bench' });

let close: () => Promise<void>;
if (values.transport === 'stdio') {
  const stdio = server.serveStdio({ limits: NO_RATE_LIMITS, fastPath: values['no-fast-path'] !== true });
  close = () => stdio.close();
  void stdio.closed.then(() => stop());
} else {
  const http = await server.serveHttp({
    port: 0,
    fastPath: values['no-fast-path'] !== true,
    authenticate: async (req) =>
      req.headers.authorization === 'Bearer bench' ? { token: 'bench', clientId: 'bench', scopes: [] } : undefined,
  });
  close = () => http.close();
  process.stdout.write(`listening ${http.url}\n`);
}

// Runs once: stdin's end (stdio's `closed`) and the harness's SIGTERM after it must not close twice.
let stopping: Promise<never> | undefined;
const stop = (): void => {
  stopping ??= close()
    .then(() => engine.stop())
    .then(() => store.close())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
