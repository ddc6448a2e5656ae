/**
 * Ours, the engine API without HTTP, as a node of a PostgreSQL deployment runs it
 * (`openPostgresBackend`: the store and its LISTEN/NOTIFY events): `engine.submit` creates the
 * task (already claimed by this node when a slot is free), the runner runs the 0 ms handler and
 * records the outcome, and the result is read with `engine.get`. Concurrency 24, as
 * graphile-worker's. The live-task cap per caller is off (`maxLiveTasksPerOwner: 0`): every bench
 * job has one owner, and the queues have no such cap.
 */
import { z } from 'zod';
import { silentLogger } from '../../src/core/ports.js';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { openPostgresBackend } from '../../src/store/postgres/index.js';
import { createEngine } from '../../src/runner/engine.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import type { OpenSystem } from './system.js';

export const ENGINE_SETTINGS = { concurrency: 24 } as const;

const OWNER = 'bench';

export const openEngine: OpenSystem = async (config) => {
  const backend = await openPostgresBackend({
    connectionString: config.url,
    schema: config.schema,
    applicationName: 'bench-engine',
    logger: silentLogger,
  });
  const tool = defineTaskTool({
    name: 'bench',
    description: 'answers at once',
    inputSchema: z.object({ key: z.string() }),
    handler: async ({ key }) => {
      config.started(key);
      config.ended(key);
      return { content: [{ type: 'text', text: 'ok' }] };
    },
  });
  const engine = createEngine({
    store: backend.store,
    events: backend.events,
    tools: [tool],
    clock: systemClock,
    ids: systemIds,
    random: systemRandom,
    logger: silentLogger,
    concurrency: ENGINE_SETTINGS.concurrency,
    maxLiveTasksPerOwner: 0,
  });
  engine.start();
  return {
    async add(key) {
      const { task } = await engine.submit({ owner: OWNER, tool: 'bench', args: { key }, wire: 'mcp-tasks-ext' });
      return task.id;
    },
    async result(id) {
      const task = await engine.get(OWNER, id);
      if (task.status === 'completed') return null;
      if (task.status === 'failed' || task.status === 'cancelled') throw new Error(`task ${id} is ${task.status}`);
      return undefined;
    },
    async stop() {
      await engine.stop();
      await backend.close();
    },
  };
};
