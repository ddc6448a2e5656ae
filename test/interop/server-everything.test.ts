/**
 * `terminus call --stdio` against `@modelcontextprotocol/server-everything` (2026.8.31), whose
 * `simulate-research-query` tool is `taskSupport: "required"` on the SDK 1.x experimental tasks:
 * four stages of ~1 s, and with `ambiguous: true` (and a client that declares elicitation) an
 * `input_required` pause whose `elicitation/create` is queued for the `tasks/result` side channel.
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EVERYTHING, killAll, MAIN, onlyJson, start, tempDir, tsNode } from '../cli/helpers.js';

const SLOW = 180_000;
const dir = tempDir('terminus-everything-');
const server = `'${process.execPath}' '${EVERYTHING}' stdio`;
let n = 0;

afterEach(() => killAll());
afterAll(() => dir.remove());

function call(args: object, input: string, extra: string[] = []) {
  n += 1;
  return start(
    tsNode(
      MAIN,
      'call',
      '--stdio',
      server,
      'simulate-research-query',
      '--args',
      JSON.stringify(args),
      '--ledger',
      join(dir.path, `l-${n}.db`),
      '--json',
      ...extra,
    ),
    { cwd: dir.path, input },
  ).done;
}

describe('server-everything simulate-research-query over stdio', () => {
  it(
    'without ambiguity: completes through the 2025-11-25 wire with the stage messages on the way',
    async () => {
      const ran = await call({ topic: 'tides' }, '');
      expect(ran.code, ran.stderr).toBe(0);
      const out = onlyJson(ran.stdout);
      expect(out).toMatchObject({ status: 'completed', operation: { state: 'ACCEPTED', wire: 'mcp-2025-11-25' } });
      expect(JSON.stringify(out.result)).toContain('# Research Report: tides');
      // statusMessage of tasks/get reaches the display.
      expect(ran.stderr).toMatch(/Gathering sources\.\.\./);
    },
    SLOW,
  );

  // KNOWN GAP (reported): the 2025-11-25 client adapter never calls tasks/result while the task is
  // input_required, so the queued elicitation/create never reaches the approval gate; the task stays
  // input_required until the wait budget stops local waiting (exit 3). `it.fails` keeps this test
  // honest: it turns red the day the side channel works, and must then become a plain `it`.
  it.fails(
    'with ambiguous: true the clarification is asked through the prompt and reaches the report',
    async () => {
      const ran = await call({ topic: 'python', ambiguous: true }, 'y\n1\n', ['--budget', '20']);
      expect(ran.stderr).toMatch(/could have multiple interpretations/);
      expect(ran.stderr).toMatch(/1\) Python programming language/);
      expect(ran.code, ran.stderr).toBe(0);
      expect(JSON.stringify(onlyJson(ran.stdout).result)).toContain('Research Report: python (programming)');
    },
    SLOW,
  );

  it(
    'with ambiguous: true and no answer channel, the budget stops local waiting only (C9): exit 3, in the ledger',
    async () => {
      const ran = await call({ topic: 'python', ambiguous: true }, '', ['--budget', '8']);
      expect(ran.code, ran.stderr).toBe(3);
      const out = onlyJson(ran.stdout);
      expect(out).toMatchObject({ status: 'detached', receipt: null });
      expect((out.operation as { taskId: string | null }).taskId).toMatch(/^[0-9a-f]{32}$/);
      expect(ran.stderr).toMatch(/server: input_required/);
      // Never a cancel: a local stop is not a server cancel.
      expect(ran.stderr).not.toMatch(/Cancelling/);
    },
    SLOW,
  );
});
