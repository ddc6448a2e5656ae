/**
 * The task log in the CLI (issue 18), with the built CLI against the built `terminus serve` and its
 * `run_tests` demo:
 * - `terminus call --follow-logs` in a real pseudo-terminal (`script`, the command `exec`ed as in
 *   interrupt.test.ts): every line printed above the redrawn status line, the final status line below
 *   the last one; without a terminal and with `--json`, the lines are JSON objects on stderr and
 *   stdout keeps its one object;
 * - `terminus ops logs ID --follow` through a kill -9 and restart of the server: the follower reads
 *   on from its cursor and sees every line exactly once, the re-run's lines under epoch 2
 *   (`-- re-run, epoch 2 --` in text); a follower stopped by Ctrl-C and started again with the
 *   `--after` it printed repeats nothing and misses nothing;
 * - one-line errors and exit codes like the other ops commands.
 */
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BUILT, built, killAll, onlyJson, start, tempDir, track } from './helpers.js';
import { serveBuilt, type BuiltServe } from '../fixtures/built-serve.js';

const SLOW = 180_000;
const dir = tempDir('terminus-cli-logs-');
let served: BuiltServe;
let n = 0;
const ledger = (): string => join(dir.path, `ledger-${(n += 1)}.db`);
const shq = (w: string): string => `'${w.replaceAll("'", "'\\''")}'`;
/**
 * The pause between tests of a suite that must still be running when its follower is interrupted
 * (Ctrl-C, or a kill -9 of the server). The interruption comes after a `terminus call` detached by
 * its 1 s budget and a follower's first lines: 2.6-2.7 s into the run at rest, up to 5.6 s with two
 * busy loops on the cores. At 300 ms a test, the 12-test suite (3.6 s) ended about 1 s after it at
 * rest and a run under load failed; at 1 s a test it has 6 s or more to spare under that load.
 */
const OUTLASTING_PAUSE_MS = 1_000;
const suite = (count: number, pauseMs: number): string => JSON.stringify({ count, failEvery: 4, pauseMs });

beforeAll(async () => {
  assertBuilt();
  served = await serveBuilt(join(dir.path, 'server.db'));
}, SLOW);
afterAll(async () => {
  await served?.stop();
  killAll();
  dir.remove();
});

/** The built CLI inside a pseudo-terminal, to its end. */
function inTerminal(args: readonly string[]): Promise<{ code: number | null; text: string }> {
  const command = `exec ${[process.execPath, BUILT, ...args].map(shq).join(' ')}`;
  const child = track(
    spawn('script', ['-qfec', command, '/dev/null'], { cwd: dir.path, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, text })));
}

/** `terminus call run_tests` detached after its 1 s budget (exit 3): the operation's id. */
async function detachedSuite(url: string, file: string, count: number, pauseMs: number): Promise<string> {
  const args = ['call', '--url', url, 'run_tests', '--args', suite(count, pauseMs), '--budget', '1', '--json'];
  const detached = await built([...args, '--ledger', file], { cwd: dir.path });
  expect(detached.code, detached.stderr).toBe(3);
  return (onlyJson(detached.stdout).operation as { id: string }).id;
}

const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('terminus call --follow-logs', () => {
  it(
    'in a terminal: the lines go above the redrawn status line, the last status line below the last line',
    async () => {
      const { code, text } = await inTerminal([
        'call',
        '--url',
        served.url,
        'run_tests',
        '--args',
        suite(8, 150),
        '--follow-logs',
        '--ledger',
        ledger(),
      ]);
      expect(code, text).toBe(0);
      const esc = String.fromCharCode(27);
      // Each log line is written after the status line was cleared, then the status line is redrawn.
      for (const line of ['running 8 tests', 'PASS test_001', 'FAIL test_004: expected 4, got 5', 'FAIL test_008']) {
        expect(text, line).toMatch(new RegExp(`\r${esc}\\[2K\\d\\d:\\d\\d:\\d\\d\\.\\d{3}  ${line}`));
      }
      expect(text).toMatch(/\d{3} {2}> 8 tests: 6 passed, 2 failed\r?\n/);
      // Exactly once each, and the summary line before the kept 100 % status line.
      expect(text.match(/PASS test_003/g)).toHaveLength(1);
      const summary = text.indexOf('> 8 tests: 6 passed, 2 failed');
      expect(text.indexOf('ACCEPTED (server: completed)', summary)).toBeGreaterThan(summary);
      expect(text).toMatch(/completed: receipt rcpt_/);
    },
    SLOW,
  );

  it(
    'in a terminal: the kept 100 % status line pairs the progress with its own message, never an older one',
    async () => {
      const { code, text } = await inTerminal([
        'call',
        '--url',
        served.url,
        'run_tests',
        '--args',
        suite(6, 100),
        '--follow-logs',
        '--ledger',
        ledger(),
      ]);
      expect(code, text).toBe(0);
      const summary = text.indexOf('> 6 tests: 4 passed, 2 failed');
      // The line redrawn last (the kept one): earlier draws of it are overwritten on screen.
      const at = text.lastIndexOf('ACCEPTED (server: completed)');
      expect(at).toBeGreaterThan(summary);
      const kept = text.slice(at).split(/\r|\n/)[0] ?? '';
      // The last message the task reported while running (`test_006 of 6`, or an older one when a
      // read missed it) belongs to 5/6, not to the finished task's 6/6: nothing follows the count.
      expect(kept).toMatch(/100% \(6\/6\)\s*$/);
    },
    SLOW,
  );

  it(
    'without a terminal, with --json: the lines are JSON objects on stderr; stdout holds one object',
    async () => {
      const ran = await built(
        [
          'call',
          '--url',
          served.url,
          'run_tests',
          '--args',
          suite(6, 100),
          '--follow-logs',
          '--json',
          '--ledger',
          ledger(),
        ],
        { cwd: dir.path },
      );
      expect(ran.code, ran.stderr).toBe(0);
      expect(onlyJson(ran.stdout)).toMatchObject({ status: 'completed' });
      const lines = jsonLines(ran.stderr);
      expect(lines.map((l) => l.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(lines[4]).toMatchObject({
        stream: 'log',
        text: 'FAIL test_004: expected 4, got 5',
        fields: { test: 'test_004' },
      });
      expect(lines[7]).toMatchObject({ stream: 'output', text: '6 tests: 5 passed, 1 failed', epoch: 1 });
    },
    SLOW,
  );
});

describe('terminus call --follow-logs, Ctrl-C', () => {
  it(
    'stops following the log with the call (exit 3) and names the command that reads on',
    async () => {
      const file = ledger();
      const call = start(
        [BUILT, 'call', '--url', served.url, 'run_tests', '--args', suite(30, 300), '--follow-logs', '--ledger', file],
        { cwd: dir.path },
      );
      await call.waitFor(/PASS test_002/, 'stderr');
      call.child.kill('SIGINT');
      const ran = await call.done;
      expect(ran.code, ran.stderr).toBe(3);
      const id = /its log: +terminus ops logs (op_[\w-]+) --follow --ledger /.exec(ran.stderr)?.[1];
      expect(id, ran.stderr).toBeDefined();
      const read = await built(['ops', 'logs', id!, '--json', '--ledger', file], { cwd: dir.path });
      expect(read.code, read.stderr).toBe(0);
      expect(jsonLines(read.stdout)[0]).toMatchObject({ seq: 1, text: 'running 30 tests' });
    },
    SLOW,
  );
});

describe('terminus ops logs', () => {
  it(
    '--follow through a kill -9 and restart of the server: every line exactly once, the re-run under epoch 2',
    async () => {
      const file = ledger();
      const db = join(dir.path, 'restart.db');
      let server = await serveBuilt(db, ['--lease-ms', '1000']);
      try {
        // Detach after 1 s: the operation is in the ledger with its task id; the suite goes on.
        const id = await detachedSuite(server.url, file, 16, OUTLASTING_PAUSE_MS);

        const follow = start([BUILT, 'ops', 'logs', id.slice(0, 12), '--follow', '--json', '--ledger', file], {
          cwd: dir.path,
        });
        await follow.waitFor(/"text":"PASS test_003"/, 'stdout');
        await server.kill9();
        // The follower retries (connection refused), and says so.
        await follow.waitFor(/terminus ops logs: lost reading the log .*retrying in \d+ s/, 'stderr');
        server = await server.again();
        const ran = await follow.done;
        expect(ran.code, ran.stderr).toBe(0);
        const objects = jsonLines(ran.stdout);
        const end = objects.pop()!;
        const seqs = objects.map((l) => l.seq as number);
        expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
        expect(end).toMatchObject({ next: seqs.length, dropped: 0, status: 'completed', done: true });
        const epochs = [...new Set(objects.map((l) => l.epoch))];
        expect(epochs).toEqual([1, 2]);
        const rerun = objects.find((l) => l.epoch === 2)!;
        expect(rerun.text).toMatch(/^resuming at test_\d{3} \(attempt 2\)$/);
        expect(objects.at(-1)).toMatchObject({
          stream: 'output',
          epoch: 2,
          text: expect.stringMatching(/^16 tests: /),
        });
        expect(ran.stderr).toMatch(/-- end of log \(task completed\); \d+ line\(s\) read --/);

        // The same log as text: the re-run is marked where it starts.
        const text = await built(['ops', 'logs', id, '--ledger', file], { cwd: dir.path });
        expect(text.code, text.stderr).toBe(0);
        const shown = text.stdout.split('\n');
        const mark = shown.indexOf('-- re-run, epoch 2 --');
        expect(mark).toBeGreaterThan(0);
        expect(shown[mark + 1]).toMatch(/ {2}resuming at test_\d{3} \(attempt 2\)$/);
        expect(shown.filter((l) => / {2}(PASS|FAIL) /.test(l)).length).toBe(seqs.length - 3);
      } finally {
        await server.stop();
      }
    },
    SLOW,
  );

  it(
    'a follower stopped by Ctrl-C (exit 3) and started again with the --after it printed: each line once',
    async () => {
      const file = ledger();
      const id = await detachedSuite(served.url, file, 12, OUTLASTING_PAUSE_MS);

      const first = start([BUILT, 'ops', 'logs', id, '--follow', '--json', '--ledger', file], { cwd: dir.path });
      await first.waitFor(/"text":"PASS test_003"/, 'stdout');
      first.child.kill('SIGINT');
      const stopped = await first.done;
      expect(stopped.code, stopped.stderr).toBe(3);
      const a = jsonLines(stopped.stdout);
      const cursor = a.pop()!;
      expect(cursor).toMatchObject({ done: false, next: a.at(-1)!.seq });
      expect(stopped.stderr).toMatch(
        new RegExp(
          `-- stopped following after line ${String(cursor.next)}; go on: terminus ops logs ${id} --after ${String(cursor.next)} --follow --`,
        ),
      );

      const second = await built(
        ['ops', 'logs', id, '--follow', '--json', '--after', String(cursor.next), '--ledger', file],
        { cwd: dir.path },
      );
      expect(second.code, second.stderr).toBe(0);
      const b = jsonLines(second.stdout);
      expect(b.pop()).toMatchObject({ done: true, status: 'completed' });
      expect([...a, ...b].map((l) => l.seq)).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
    },
    SLOW,
  );

  it(
    '--follow whose reader left (`| head -1`): it ends at its next line with 141, quietly, the task untouched',
    async () => {
      const file = ledger();
      const id = await detachedSuite(served.url, file, 40, 300);
      const follow = start([BUILT, 'ops', 'logs', id, '--follow', '--ledger', file], { cwd: dir.path });
      follow.child.stdout!.on('error', () => undefined);
      await follow.waitFor(/PASS test_001/, 'stdout');
      follow.child.stdout!.destroy();
      const ran = await follow.done;
      // Before: the EPIPE was thrown at the top (exit 1, a stack on stderr).
      expect(ran.code).toBe(141);
      expect(ran.stderr).toBe('');
      const shown = onlyJson((await built(['ops', 'show', id, '--json', '--ledger', file], { cwd: dir.path })).stdout);
      expect((shown.operation as { state: string }).state).toBe('WORKING');
    },
    SLOW,
  );

  it('errors: unknown id (1), bad --after (2), no ledger (2), one line each', async () => {
    const file = ledger();
    const made = await built(['call', '--url', served.url, 'run_tests', '--args', suite(1, 0), '--ledger', file], {
      cwd: dir.path,
    });
    expect(made.code, made.stderr).toBe(0);
    const unknown = await built(['ops', 'logs', 'op_nope', '--ledger', file], { cwd: dir.path });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /^terminus ops logs: no operation, call node, task or submission key op_nope; terminus ops list --all shows them\n$/,
    );
    const bad = await built(['ops', 'logs', 'op_x', '--after', '-1', '--ledger', file], { cwd: dir.path });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    const none = await built(['ops', 'logs', 'op_x', '--ledger', join(dir.path, 'missing.db')], { cwd: dir.path });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^terminus ops: no ledger at .*missing\.db/);
  });
});
