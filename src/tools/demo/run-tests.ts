import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTaskTool } from '../../runner/tool.js';

const args = z.object({
  count: z.number().int().min(1).max(10_000).default(20),
  failEvery: z.number().int().min(0).max(10_000).default(7).describe('every Nth test fails; 0: none'),
  pauseMs: z.number().int().min(0).max(60_000).default(250).describe('wall time of each test'),
});

/** A failed test as the summary and the log line's fields show it. */
interface Failure {
  readonly test: string;
  readonly expected: number;
  readonly got: number;
}

interface RunCheckpoint {
  readonly next: number;
  readonly passed: number;
  readonly failures: Failure[];
}

const testName = (i: number): string => `test_${String(i).padStart(3, '0')}`;

/**
 * `run_tests`: a fake test suite for the task-log demo (issue 18). Runs `count` tests of `pauseMs`
 * each; test i fails when `failEvery` divides it (`expected i % 5, got one more`). Each result is a
 * log line (`PASS test_007`, `FAIL test_009: expected 4, got 5` with fields), so a client reads
 * the failures with `terminus/tasks/logs` while the suite still runs. Checkpoints after each test:
 * a re-run after a crash logs where it resumes and goes on from there. Cancellable within a test.
 */
export const runTestsTool = defineTaskTool({
  name: 'run_tests',
  title: 'Run a test suite',
  description: 'Runs a fake test suite, logging each result as it goes (read them with terminus/tasks/logs).',
  inputSchema: args,
  taskSupport: 'optional',
  pollIntervalMs: 500,
  handler: async ({ count, failEvery, pauseMs }, ctx) => {
    const saved = ctx.lastCheckpoint as RunCheckpoint | undefined;
    let { next, passed } = saved ?? { next: 1, passed: 0 };
    const failures = [...(saved?.failures ?? [])];
    if (saved !== undefined) await ctx.log(`resuming at ${testName(next)} (attempt ${ctx.attempt})`, { next });
    else await ctx.log(`running ${count} tests`, { count, failEvery });
    for (; next <= count; next++) {
      ctx.signal.throwIfAborted();
      await ctx.progress(next - 1, count, `${testName(next)} of ${count}`);
      await sleep(pauseMs, undefined, { signal: ctx.signal });
      const test = testName(next);
      if (failEvery > 0 && next % failEvery === 0) {
        const failure = { test, expected: next % 5, got: (next % 5) + 1 };
        failures.push(failure);
        await ctx.log(`FAIL ${test}: expected ${failure.expected}, got ${failure.got}`, { ...failure, status: 'fail' });
      } else {
        passed++;
        await ctx.log(`PASS ${test}`, { test, status: 'pass' });
      }
      await ctx.checkpoint({ next: next + 1, passed, failures } satisfies RunCheckpoint);
    }
    await ctx.progress(count, count, 'done');
    const summary = `${count} tests: ${passed} passed, ${failures.length} failed`;
    await ctx.output(summary);
    return {
      content: [{ type: 'text', text: [summary, ...failures.map((f) => `FAIL ${f.test}`)].join('\n') }],
      structuredContent: { count, passed, failed: failures.length, failures, attempt: ctx.attempt },
    };
  },
});
