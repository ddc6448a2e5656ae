/**
 * `executor.events(operationId)` (issue 32) against the built `terminus serve --max-task-events 3`:
 * the server keeps only each task's 3 newest progress and log events, so the follower's pages skip
 * seqs. A follower that stops part-way hands its cursor to a second one (a new executor on the same
 * ledger): together they see each event at most once, in seq order, every status event exactly
 * once, and the terminal status last.
 */
import { describe, expect, it } from 'vitest';
import { isTerminal } from '../../src/core/task.js';
import { followAndHandOver, SLOW, useBuiltServe } from './events-helpers.js';

const served = useBuiltServe('terminus-events-bound-', ['--max-task-events', '3']);

/** 20 tests of 40 ms, none failing. */
const SUITE = { count: 20, failEvery: 0, pauseMs: 40 };

describe('executor: following events a bounded server dropped some of', () => {
  for (const wire of ['mcp-tasks-ext', 'aip-151'] as const) {
    it(
      `${wire}: a broken follower hands its cursor on; each event at most once, each status once, completed last`,
      async () => {
        const { seen, secondDone } = await followAndHandOver({
          url: served.url(),
          wire,
          callNodeId: `bound-${wire}`,
          suite: SUITE,
          breakAfter: 3,
          // Let the task run ahead of the reader, so the bound drops events it has not read yet.
          meanwhile: async (later, operationId) => {
            for (let read = 0; read < 600; read++) {
              const page = await later.readLogs(operationId, { after: 10_000 });
              if (isTerminal(page.status)) break;
              await new Promise((resolve) => setTimeout(resolve, 100));
            }
          },
        });
        expect(secondDone).toBe(true);
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
      },
      SLOW,
    );
  }
});
