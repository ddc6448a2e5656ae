/**
 * `executor.events(operationId)` (issue 32) against the built `terminus serve --max-task-events 3`:
 * the server keeps only each task's 3 newest progress and log events, so the follower's pages skip
 * seqs. A follower that stops part-way hands its cursor to a second one (a new executor on the same
 * ledger): together they see each event at most once, in seq order, every status event exactly
 * once, and the terminal status last.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { isTerminal } from '../../src/core/task.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import type { ServerEvent } from '../../src/executor/wire-port.js';
import { assertBuilt, killAll, tempDir } from '../cli/helpers.js';
import { serveBuilt, type BuiltServe } from '../fixtures/built-serve.js';
import { openExecutor } from './executor-helpers.js';

const SLOW = 120_000;
const dir = tempDir('terminus-events-bound-');
let served: BuiltServe;

beforeAll(async () => {
  assertBuilt();
  served = await serveBuilt(join(dir.path, 'server.db'), ['--max-task-events', '3']);
}, SLOW);
afterAll(async () => {
  await served?.stop();
  killAll();
  dir.remove();
});

/** 20 tests of 40 ms, none failing. */
const SUITE = { count: 20, failEvery: 0, pauseMs: 40 };

describe('executor: following events a bounded server dropped some of', () => {
  for (const wire of ['mcp-tasks-ext', 'aip-151'] as const) {
    it(
      `${wire}: a broken follower hands its cursor on; each event at most once, each status once, completed last`,
      async () => {
        const { executor, ledger } = await openExecutor(served.url, { wire });
        const seen: ServerEvent[] = [];
        const op = await executor.submit({ callNodeId: `bound-${wire}`, server: 's', tool: 'run_tests', args: SUITE });
        const first = executor.events(op.operationId);
        for await (const event of first) {
          seen.push(event);
          if (seen.length === 3) break;
        }
        const cursor = first.cursor;
        await executor.close();
        const later = await createExecutor({
          ledger,
          connect: (_s, forced) => connectServer({ url: served.url }, { clock: systemClock, wire: forced ?? wire }),
          clock: systemClock,
          random: systemRandom,
          ids: systemIds,
        });
        try {
          // Let the task run ahead of the reader, so the bound drops events it has not read yet.
          for (let read = 0; read < 600; read++) {
            const page = await later.readLogs(op.operationId, { after: 10_000 });
            if (isTerminal(page.status)) break;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          const second = later.events(op.operationId, { ...(cursor === undefined ? {} : { cursor }) });
          for await (const event of second) seen.push(event);
          expect(second.done).toBe(true);
          const seqs = seen.map((e) => e.seq);
          expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
          const statuses = seen.flatMap((e) => (e.kind === 'status' ? [e.status] : []));
          expect(statuses).toEqual(['working', 'completed']);
          expect(seen.at(-1)).toMatchObject({ kind: 'status', status: 'completed' });
          // working, 'running', 20 x (progress, PASS), the last progress, the summary, completed: 45
          // events; the reader came back after the end, so most of them were dropped.
          expect(seen.at(-1)?.seq).toBe(45);
          expect(seen.length, JSON.stringify(seen.map((e) => [e.seq, e.kind]))).toBeLessThan(15);
          const lines = seen.flatMap((e) => (e.kind === 'log' ? [e.line?.text ?? ''] : []));
          expect(lines.at(-1)).toBe('20 tests: 20 passed, 0 failed');
        } finally {
          await later.close();
        }
      },
      SLOW,
    );
  }
});
