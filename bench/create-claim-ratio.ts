/**
 * `npx tsx bench/create-claim-ratio.ts`: one client, one 0 ms task at a time, submit to terminal,
 * on a real SQLite file (WAL, synchronous=FULL). "two commits": the submitting node runs the task
 * (created claimed, then finished). "three commits": a serve-only engine creates the task and a
 * runner-only engine on the same file and the same in-process events claims it (create, claim,
 * finish), as `serve --no-runner` + a worker, or a node whose slots are full. Rounds interleave
 * (A B A B ...); printed: the ratio of the medians and the load average, since absolute times on a
 * shared machine mean little.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { systemClock, systemIds } from '../src/core/system.js';
import { createEngine } from '../src/runner/engine.js';
import type { TaskEngine } from '../src/runner/engine-port.js';
import { defineTaskTool } from '../src/runner/tool.js';
import { createLocalEvents } from '../src/store/events.js';
import { openSqliteTaskStore } from '../src/store/sqlite/index.js';

const TASKS = 100;
const ROUNDS = 3;
const tool = defineTaskTool({
  name: 'zero',
  description: 'answers at once',
  inputSchema: z.object({ n: z.number() }),
  handler: async () => ({ content: [{ type: 'text', text: 'ok' }] }),
});

async function timeTasks(submitter: TaskEngine): Promise<number> {
  const start = performance.now();
  for (let n = 0; n < TASKS; n += 1) {
    const { task } = await submitter.submit({ owner: 'o', tool: 'zero', args: { n }, wire: 'mcp-tasks-ext' });
    let seen = task;
    while (seen.status === 'working') {
      seen = await submitter.waitForChange('o', task.id, { sinceUpdatedAt: seen.updatedAt, timeoutMs: 5_000 });
    }
  }
  return (performance.now() - start) / TASKS;
}

async function run(dir: string, mode: 'two' | 'three', round: number): Promise<number> {
  const store = await openSqliteTaskStore({ path: join(dir, `${mode}-${round}.db`) });
  const events = createLocalEvents();
  const base = { store, events, tools: [tool], clock: systemClock, ids: systemIds };
  const runner = createEngine({ ...base, nodeId: 'runner' });
  runner.start();
  const submitter = mode === 'two' ? runner : createEngine({ ...base, nodeId: 'serve-only' });
  try {
    return await timeTasks(submitter);
  } finally {
    await runner.stop();
    await store.close();
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

const dir = mkdtempSync(join(tmpdir(), 'create-claim-'));
process.stdout.write(
  `load average at start: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
try {
  const two: number[] = [];
  const three: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    two.push(await run(dir, 'two', round));
    three.push(await run(dir, 'three', round));
  }
  const ratio = median(three) / median(two);
  process.stdout.write(
    `submit-to-terminal, 1 client, ${TASKS} tasks x ${ROUNDS} rounds: three / two commits = ${ratio.toFixed(2)}x\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(
  `load average at end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
