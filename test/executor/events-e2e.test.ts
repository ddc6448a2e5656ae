/**
 * `executor.events(operationId)` (issue 32) against the built `terminus serve` and its `run_tests`
 * demo: a follower that stops half-way (a broken stream, a crashed reader) hands over its cursor,
 * and a second follower (in a new executor on the same ledger) reads on from it: every event of
 * the task once, in seq order, none repeated, none skipped, ending at the terminal status.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import { ExecutorError } from '../../src/executor/executor-types.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { ROOT, tsNode } from '../cli/helpers.js';
import { followAndHandOver, SLOW, useBuiltServe } from './events-helpers.js';

const served = useBuiltServe('terminus-events-e2e-');

/** 8 tests of 150 ms: events working, 'running 8 tests', 8 results, the summary, completed. */
const SUITE = { count: 8, failEvery: 3, pauseMs: 150 };

describe('executor: following ordered task events over the real server', () => {
  for (const wire of ['mcp-tasks-ext', 'aip-151'] as const) {
    it(
      `${wire}: a follower broken after 4 events hands its cursor on; the next reads every later event once`,
      async () => {
        const { seen, firstSeq, secondDone } = await followAndHandOver({
          url: served.url(),
          wire,
          callNodeId: `events-${wire}`,
          suite: SUITE,
          breakAfter: 4,
        });
        expect(firstSeq).toBe(4);
        expect(secondDone).toBe(true);
        const seqs = seen.map((e) => e.seq);
        expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
        expect(seen[0]).toMatchObject({ kind: 'status', status: 'working' });
        expect(seen.at(-1)).toMatchObject({ kind: 'status', status: 'completed' });
        const lines = seen.flatMap((e) => (e.kind === 'log' ? [e.line?.text ?? ''] : []));
        expect(lines[0]).toBe('running 8 tests');
        expect(lines.at(-1)).toBe('8 tests: 6 passed, 2 failed');
        expect(lines.filter((t) => t.startsWith('FAIL'))).toHaveLength(2);
      },
      SLOW,
    );
  }

  it(
    'a server that keeps no ordered events (SDK 1.32 over stdio): ExecutorError no_events, and the call still completes',
    async () => {
      const executor = await createExecutor({
        ledger: createMemoryLedger(),
        connect: () =>
          connectServer(
            {
              command: process.execPath,
              args: tsNode(join(ROOT, 'test/fixtures/sdk132-tasks-server.ts')),
              stderr: 'ignore',
            },
            { clock: systemClock, wire: 'auto' },
          ),
        clock: systemClock,
        random: systemRandom,
        ids: systemIds,
        policy: { minPollIntervalMs: 100, backoffBaseMs: 100 },
      });
      try {
        const op = await executor.submit({ callNodeId: 'sdk', server: 'sdk', tool: 'sdk_complete', args: { ms: 500 } });
        const error = await (async () => {
          for await (const _ of executor.events(op.operationId)) expect.unreachable('an event from a foreign server');
        })().then(
          () => expect.unreachable('the follower ended without an error'),
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(ExecutorError);
        expect(error).toMatchObject({
          code: 'no_events',
          message: expect.stringMatching(/keeps no ordered task events/),
        });
        expect((await op.result()).status).toBe('completed');
      } finally {
        await executor.close();
      }
    },
    SLOW,
  );
});
