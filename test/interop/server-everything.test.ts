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
/** Budget 8 s plus start-up and slack: past this the budget did not stop the wait. */
const UNANSWERED_MS = 45_000;
const dir = tempDir('terminus-everything-');
const server = `'${process.execPath}' '${EVERYTHING}' stdio`;
let n = 0;

afterEach(() => killAll());
afterAll(() => dir.remove());

/** `input` undefined leaves stdin open and unwritten: a prompt then waits for ever. */
function call(args: object, input: string | undefined, extra: string[] = []) {
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

  // The queued elicitation/create reaches the prompt through the tasks/result side channel: the
  // adapter opens tasks/result on input_required and answers the request on the same pipe.
  it(
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
    'with ambiguous: true and stdin at its end, the prompt answers cancel (never a made-up value) and the server goes on',
    async () => {
      const ran = await call({ topic: 'python', ambiguous: true }, '');
      expect(ran.stderr).toMatch(/could have multiple interpretations/);
      expect(ran.code, ran.stderr).toBe(0);
      expect(JSON.stringify(onlyJson(ran.stdout).result)).toContain('User cancelled - using default interpretation');
    },
    SLOW,
  );

  // The operation waits in INPUT_REQUIRED, where polling is paused while the gate is asked; the
  // wait budget still holds there (a deadline timer), so nobody answering ends in a local stop.
  it(
    'with ambiguous: true and nobody answering the prompt, the budget stops local waiting only (C9): exit 3, in the ledger',
    async () => {
      const ran = await call({ topic: 'python', ambiguous: true }, undefined, ['--budget', '8']);
      expect(ran.code, ran.stderr).toBe(3);
      const out = onlyJson(ran.stdout);
      expect(out).toMatchObject({ status: 'detached', receipt: null });
      const operation = out.operation as { taskId: string | null; state: string };
      expect(operation.taskId).toMatch(/^[0-9a-f]{32}$/);
      // Stopped while waiting on the answer: the operation is still INPUT_REQUIRED in the ledger.
      expect(operation.state).toBe('INPUT_REQUIRED');
      // The question did reach the prompt; only the answer is missing.
      expect(ran.stderr).toMatch(/could have multiple interpretations/);
      // Never a cancel: a local stop is not a server cancel.
      expect(ran.stderr).not.toMatch(/Cancelling/);
    },
    UNANSWERED_MS,
  );
});
