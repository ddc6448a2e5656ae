/**
 * The input prompt as a person meets it, in a real pseudo-terminal (`script`) with the built CLI and
 * the demo `migrate` tool: its confirmation is asked once; `[c]ancel` cancels the task (exit 130)
 * while `[n]o` declines it; Ctrl-C at the prompt ends the line cleanly (the next line starts on its
 * own, nothing half-drawn, exit 3) and sends no answer, so the question is asked again by `ops
 * resume`, whose status line does not draw over it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { assertBuilt, BUILT, killAll, startServe, tempDir, track, type Served } from './helpers.js';

const dir = tempDir('terminus-prompt-');
let served: Served;
let n = 0;
const SLOW = 180_000;
const ledger = (): string => join(dir.path, `ledger-${(n += 1)}`, 'ledger.db');
const shq = (w: string): string => `'${w.replaceAll("'", "'\\''")}'`;
const QUESTION = 'Run the migration? [y]es / [n]o (decline) / [c]ancel the task: ';
const ESC = String.fromCharCode(27);

beforeAll(async () => {
  assertBuilt();
  served = await startServe(dir.path);
}, SLOW);
afterAll(async () => {
  await served.stop();
  killAll();
  dir.remove();
});

async function serverStatus(taskId: string): Promise<string> {
  const wire = await connectServer({ url: served.url }, { clock: systemClock, wire: 'mcp-tasks-ext' });
  try {
    return (await wire.getStatus(taskId)).status;
  } finally {
    await wire.close();
  }
}

/** The built CLI inside a pseudo-terminal; `type` writes keys to it. */
function inTerminal(args: readonly string[]) {
  // `exec` replaces script's shell, so the CLI alone receives the terminal's SIGINT.
  const command = `exec ${[process.execPath, BUILT, ...args].map(shq).join(' ')}`;
  const child = track(
    spawn('script', ['-qfec', command, '/dev/null'], { cwd: dir.path, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    type: (keys: string) => child.stdin!.write(keys),
    output: () => text,
    done,
    waitFor: async (pattern: RegExp | string): Promise<void> => {
      for (;;) {
        if (typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text)) return;
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode} before ${String(pattern)}: ${text}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

const migrate = (file: string, table: string, ...extra: string[]) =>
  inTerminal([
    'call',
    '--url',
    served.url,
    'migrate',
    '--args',
    `{"table":"${table}","rows":50}`,
    '--ledger',
    file,
    ...extra,
  ]);

describe('the migrate prompt in a terminal', () => {
  it(
    'asks once: y runs the migration',
    async () => {
      const term = migrate(ledger(), 'users');
      await term.waitFor(QUESTION);
      term.type('y\r');
      expect(await term.done).toBe(0);
      const shown = term.output();
      expect(shown.split('[c]ancel the task').length - 1).toBe(1);
      expect(shown).not.toMatch(/confirm \[y\/n\]/);
      expect(shown).toMatch(/Migrated 50 rows of users/);
    },
    SLOW,
  );

  it(
    '[c]ancel cancels the task (exit 130); [n]o declines it (the tool says not confirmed, exit 0)',
    async () => {
      const cancelled = migrate(ledger(), 'orders');
      await cancelled.waitFor(QUESTION);
      cancelled.type('c\r');
      expect(await cancelled.done).toBe(130);
      expect(cancelled.output()).toMatch(/\[c\]ancel: cancel requested for op_/);
      const taskId = /cancelled: receipt rcpt_\S+ \(operation op_\S+, task (\S+), CANCELLED_ACCEPTED\)/.exec(
        cancelled.output().replaceAll(/\r?\n/g, ''),
      )?.[1];
      expect(taskId, cancelled.output()).toBeDefined();
      expect(await serverStatus(taskId!)).toBe('cancelled');

      const declined = migrate(ledger(), 'orders');
      await declined.waitFor(QUESTION);
      declined.type('n\r');
      expect(await declined.done).toBe(0);
      expect(declined.output()).toMatch(/Migration of orders not confirmed; nothing changed/);
    },
    SLOW,
  );

  it(
    'Ctrl-C at the prompt: a clean line, exit 3, no answer sent; ops resume asks again without drawing over it',
    async () => {
      const file = ledger();
      const term = migrate(file, 'accounts');
      await term.waitFor(QUESTION);
      term.type('\x03');
      expect(await term.done).toBe(3);
      const shown = term.output();
      // The terminal echoes ^C after the question; what follows starts on a line of its own.
      expect(shown).toMatch(/\[c\]ancel the task: \^C\r?\n(\r?)Ctrl-C: stopped following/);
      expect(shown).not.toContain('(end of input)');
      // The receipt line starts its own line: no status line left drawn in front of it.
      expect(shown).toMatch(
        new RegExp(`(\\n|${ESC}\\[2K)terminus call: detached \\(operation op_[\\w-]+, task \\S+, INPUT_REQUIRED\\)`),
      );
      expect(shown).toMatch(/the task waits for its answer \(asked again when you follow it\)/);
      const [, opId, taskId] = /terminus call: detached \(operation (op_[\w-]+), task (\S+),/.exec(shown)!;
      expect(await serverStatus(taskId!)).toBe('input_required');

      const resumed = inTerminal(['ops', 'resume', opId!, '--ledger', file]);
      await resumed.waitFor(QUESTION);
      const at = resumed.output().length;
      // The status line redraws every 250 ms; over a question it would clear the question's line.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(resumed.output().slice(at)).not.toContain(`${ESC}[2K`);
      resumed.type('y\r');
      expect(await resumed.done).toBe(0);
      expect(resumed.output()).toMatch(/Migrated 50 rows of accounts/);
    },
    SLOW,
  );

  it(
    'the budget ending at a question ends its line the same way; ops resume of everything holds its lines while asking',
    async () => {
      const file = ledger();
      const term = migrate(file, 'budget', '--budget', '2');
      await term.waitFor(QUESTION);
      expect(await term.done).toBe(3);
      const shown = term.output();
      expect(shown).toMatch(/\[c\]ancel the task: \r?\n(\r?)terminus call: detached \(operation op_/);
      expect(shown).not.toContain('(end of input)');

      const all = inTerminal(['ops', 'resume', '--ledger', file]);
      await all.waitFor(QUESTION);
      const at = all.output().length;
      // Each change of each operation is a line of its own; none is written over the question.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(all.output().slice(at)).toBe('');
      all.type('c\r');
      expect(await all.done).toBe(0);
      expect(all.output()).toMatch(/\[c\]ancel: cancel requested for op_/);
      expect(all.output()).toMatch(/op_\S+ +cli-\S+ +cancelled +rcpt_/);
    },
    SLOW,
  );
});
