/**
 * Ctrl-C on `terminus call` (issue 11 defect 3, C9): like Temporal's `workflow execute`, Ctrl-C
 * stops FOLLOWING, never the task, and says how to follow again and how to cancel; cancelling is
 * explicit (`terminus ops cancel`, or `--cancel-on-interrupt`); a second Ctrl-C exits at once.
 * The built CLI runs in a real pseudo-terminal (`script`), where Ctrl-C is the byte 0x03 that the
 * terminal turns into SIGINT, as for a person at a keyboard.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import {
  assertBuilt,
  BUILT,
  built,
  killAll,
  onlyJson,
  start,
  startServe,
  tempDir,
  track,
  type Served,
} from './helpers.js';

const dir = tempDir('terminus-interrupt-');
let served: Served;
let n = 0;
const SLOW = 180_000;
const ledger = (): string => join(dir.path, `ledger-${(n += 1)}`, 'ledger.db');
const report = (title: string): string => JSON.stringify({ title, sections: 200, sectionSeconds: 1 });
const shq = (w: string): string => `'${w.replaceAll("'", "'\\''")}'`;

beforeAll(async () => {
  assertBuilt();
  served = await startServe(dir.path);
}, SLOW);
afterAll(async () => {
  served.child.kill('SIGCONT');
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
  // `script -c` runs the command through $SHELL; `exec` replaces that shell, so the CLI alone
  // receives the terminal's SIGINT (a non-interactive dash would die of it first: exit 130).
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
    waitFor: async (pattern: RegExp): Promise<RegExpExecArray> => {
      for (;;) {
        const match = pattern.exec(text);
        if (match !== null) return match;
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode} before ${pattern}: ${text}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

describe('terminus call: Ctrl-C', () => {
  it(
    'in a terminal, Ctrl-C stops following (exit 3), the task keeps working, and the printed ops cancel cancels it',
    async () => {
      const file = ledger();
      const term = inTerminal(['call', '--url', served.url, 'build_report', '--args', report('pty'), '--ledger', file]);
      await term.waitFor(/WORKING \(server: working\)/);
      // The terminal shows the redrawn status line, not one line per change.
      expect(term.output()).toMatch(new RegExp(`\r${String.fromCharCode(27)}\\[2K\\d+\\.\\ds {2}WORKING`));
      term.type('\x03');
      expect(await term.done).toBe(3);
      const shown = term.output();
      expect(shown).toMatch(/Ctrl-C: stopped following; the task keeps running/);
      expect(shown).toMatch(/follow again: terminus ops resume op_\S+ --ledger \S+/);
      const id = /cancel it: +terminus ops cancel (op_[\w-]+)/.exec(shown)?.[1];
      expect(id, shown).toBeDefined();
      expect(shown).not.toMatch(/[Cc]ancel(ling|led|: cancel request)/);

      const record = onlyJson((await built(['ops', 'show', id!, '--json', '--ledger', file], { cwd: dir.path })).stdout)
        .operation as { taskId: string; state: string; waitingStoppedAt: number | null };
      expect(record.state).toBe('WORKING');
      expect(record.waitingStoppedAt).not.toBeNull();
      // C9: stopping to follow never reaches the server.
      expect(await serverStatus(record.taskId)).toBe('working');

      // The suggested command, with an id prefix (12 characters) as a person would paste it.
      const cancelled = await built(['ops', 'cancel', id!.slice(0, 12), '--ledger', file], { cwd: dir.path });
      expect(cancelled.code, cancelled.stderr).toBe(0);
      expect(cancelled.stderr).toMatch(/cancel requested for operation op_/);
      expect(cancelled.stderr).toMatch(/cancelled: receipt rcpt_/);
      expect(await serverStatus(record.taskId)).toBe('cancelled');
    },
    SLOW,
  );

  it(
    'a second Ctrl-C exits at once while the server does not answer; the operation stays in the ledger',
    async () => {
      const file = ledger();
      // A frozen server: the submission hangs, so only the second Ctrl-C can end the command.
      served.child.kill('SIGSTOP');
      try {
        const call = start(
          [BUILT, 'call', '--url', served.url, 'build_report', '--args', report('twice'), '--ledger', file, '--json'],
          {
            cwd: dir.path,
          },
        );
        await call.waitFor(/CONNECTING/, 'stderr');
        call.child.kill('SIGINT');
        await call.waitFor(/Ctrl-C: stopping once the call is recorded \(Ctrl-C again exits now\)/, 'stderr');
        call.child.kill('SIGINT');
        const ran = await call.done;
        expect(ran.code).toBe(3);
        expect(ran.stderr).toMatch(/Ctrl-C again: exiting now/);
        expect(onlyJson(ran.stdout)).toMatchObject({ status: 'detached', receipt: null, exitCode: 3 });
      } finally {
        served.child.kill('SIGCONT');
      }
      // Whatever reached the ledger is settled by a resume: one operation at most, never a second task.
      const listed = onlyJson(
        (await built(['ops', 'list', '--all', '--json', '--ledger', file], { cwd: dir.path })).stdout,
      );
      expect((listed.operations as unknown[]).length).toBeLessThanOrEqual(1);
    },
    SLOW,
  );

  it(
    '--cancel-on-interrupt keeps the old behaviour: Ctrl-C sends a cancel, waits for the server, exits 130',
    async () => {
      const file = ledger();
      const call = start(
        [
          BUILT,
          'call',
          '--url',
          served.url,
          'build_report',
          '--args',
          report('cancel'),
          '--ledger',
          file,
          '--json',
          '--cancel-on-interrupt',
        ],
        { cwd: dir.path },
      );
      await call.waitFor(/WORKING \(server: working\)/, 'stderr');
      call.child.kill('SIGINT');
      const ran = await call.done;
      expect(ran.stderr).toMatch(/Ctrl-C: cancel requested for op_/);
      expect(ran.code).toBe(130);
      const out = onlyJson(ran.stdout);
      expect(out).toMatchObject({ status: 'cancelled', operation: { state: 'CANCELLED_ACCEPTED' } });
      expect(await serverStatus((out.operation as { taskId: string }).taskId)).toBe('cancelled');
    },
    SLOW,
  );

  it(
    '--cancel-on-interrupt whose output reader died of the same Ctrl-C (`2>&1 | grep`): the cancel still reaches the server',
    async () => {
      const file = ledger();
      const call = start(
        [
          BUILT,
          'call',
          '--url',
          served.url,
          'build_report',
          '--args',
          report('piped'),
          '--ledger',
          file,
          '--cancel-on-interrupt',
        ],
        { cwd: dir.path },
      );
      call.child.stdout!.on('error', () => undefined);
      await call.waitFor(/WORKING \(server: working\)/, 'stderr');
      // The terminal's Ctrl-C reaches the whole pipeline: `grep` is gone before the CLI writes
      // "cancel requested", so every later write to either stream fails with EPIPE.
      call.child.stdout!.destroy();
      call.child.stderr!.destroy();
      call.child.kill('SIGINT');
      const ran = await call.done;
      // Before: the first write's EPIPE was thrown at the top, the process died with exit 1, and
      // the cancel was never recorded: the operation stayed WORKING and the task ran on.
      expect(ran.code).toBe(130);
      const record = onlyJson(
        (await built(['ops', 'list', '--all', '--json', '--ledger', file], { cwd: dir.path })).stdout,
      ).operations as { state: string; taskId: string }[];
      expect(record.map((r) => r.state)).toEqual(['CANCELLED_ACCEPTED']);
      expect(await serverStatus(record[0]!.taskId)).toBe('cancelled');
    },
    SLOW,
  );

  it('--help explains Ctrl-C, --cancel-on-interrupt, re-runs and the exit codes', async () => {
    const help = await built(['call', '--help'], { cwd: dir.path });
    expect(help.stdout).toMatch(/Ctrl-C +stop following; the task keeps running/);
    expect(help.stdout).toMatch(/A second Ctrl-C exits at once/);
    expect(help.stdout).toMatch(/--cancel-on-interrupt/);
    expect(help.stdout).toMatch(/re-attaches to its operation while it is in flight/);
    expect(help.stdout).toMatch(/Exit codes: 0 completed/);
  });
});
