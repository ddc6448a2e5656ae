/**
 * `terminus call` end to end: the CLI as a child process against `terminus serve` (Tasks extension
 * over HTTP) on 127.0.0.1 port 0, with its own SQLite ledger per test.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { killAll, onlyJson, startServe, tempDir, terminus, type Served } from './helpers.js';

const dir = tempDir('terminus-cli-');
let served: Served;
let n = 0;
/** Each CLI run starts tsx and the SDK from source: seconds apiece on a shared two-core machine. */
const SLOW = 180_000;
const ledger = (): string => join(dir.path, `ledger-${(n += 1)}`, 'ledger.db');

beforeAll(async () => {
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

const report = (title: string, sections: number, sectionSeconds: number): string =>
  JSON.stringify({ title, sections, sectionSeconds });

describe('terminus call', () => {
  it(
    'a bar keeps its message until another report comes: an answer without progress (the completed status) does not clear it',
    async () => {
      const ran = await terminus(
        [
          'call',
          '--url',
          served.url,
          'build_report',
          '--args',
          report('bar-1', 3, 0.4),
          '--ledger',
          ledger(),
          '--json',
        ],
        { cwd: dir.path },
      );
      expect(ran.code, ran.stderr).toBe(0);
      const bars = ran.stderr.split('\n').filter((line) => /\d+% \(\d+\/3\)/.test(line));
      expect(bars.length, ran.stderr).toBeGreaterThan(0);
      // build_report sends "section N of 3" with every report; only the final 100 % line has none.
      for (const line of bars.filter((l) => !/100% \(3\/3\)/.test(l))) {
        expect(line, ran.stderr).toMatch(/section \d of 3$/);
      }
    },
    SLOW,
  );

  it(
    '--json prints exactly one object with the receipt and the result, and exits 0',
    async () => {
      const file = ledger();
      const ran = await terminus(
        ['call', '--url', served.url, 'build_report', '--args', report('json-1', 2, 0.05), '--ledger', file, '--json'],
        { cwd: dir.path },
      );
      expect(ran.stderr).not.toMatch(/Error/);
      expect(ran.code).toBe(0);
      const out = onlyJson(ran.stdout);
      expect(out).toMatchObject({
        status: 'completed',
        exitCode: 0,
        operation: { state: 'ACCEPTED', wire: 'mcp-tasks-ext' },
      });
      const receipt = out.receipt as { id: string; status: string; taskId: string };
      expect(receipt.id).toMatch(/^rcpt_/);
      expect(receipt.status).toBe('completed');
      expect(out.result).toMatchObject({ structuredContent: { title: 'json-1' } });
      expect(await serverStatus(receipt.taskId)).toBe('completed');

      const listed = await terminus(['ops', 'list', '--all', '--json', '--ledger', file], { cwd: dir.path });
      expect(onlyJson(listed.stdout)).toMatchObject({
        operations: [{ tool: 'build_report', state: 'ACCEPTED', taskId: receipt.taskId, server: served.url }],
      });
    },
    SLOW,
  );

  it(
    'without --json prints the result text on stdout and the receipt id on stderr',
    async () => {
      const ran = await terminus(
        ['call', '--url', served.url, 'build_report', '--args', report('plain-1', 1, 0.05), '--ledger', ledger()],
        { cwd: dir.path },
      );
      expect(ran.code).toBe(0);
      expect(ran.stdout).toMatch(/^# plain-1\nsection 1: /);
      expect(ran.stderr).toMatch(/completed: receipt rcpt_\S+ \(operation op_/);
      // Not a terminal: plain progress lines, one per change.
      expect(ran.stderr).toMatch(/\] WORKING \(server: working\)/);
    },
    SLOW,
  );

  it(
    'answers an input round from piped stdin (accept) and the tool sees the answer',
    async () => {
      const ran = await terminus(
        [
          'call',
          '--url',
          served.url,
          'migrate',
          '--args',
          '{"table":"users","rows":5}',
          '--ledger',
          ledger(),
          '--json',
        ],
        { cwd: dir.path, input: 'y\ny\n' },
      );
      expect(ran.code).toBe(0);
      expect(ran.stderr).toMatch(/migrate asks for input/);
      expect(ran.stderr).toMatch(/Migrate 5 rows of users to JSON Lines\?/);
      expect(ran.stderr).toMatch(/confirm \(boolean, required\)/);
      const out = onlyJson(ran.stdout);
      expect(JSON.stringify(out.result)).toMatch(/Migrated 5 rows of users/);
    },
    SLOW,
  );

  it(
    'a declined input round reaches the tool as a decline',
    async () => {
      const ran = await terminus(
        [
          'call',
          '--url',
          served.url,
          'migrate',
          '--args',
          '{"table":"orders","rows":5}',
          '--ledger',
          ledger(),
          '--json',
        ],
        { cwd: dir.path, input: 'n\n' },
      );
      expect(ran.code).toBe(0);
      expect(JSON.stringify(onlyJson(ran.stdout).result)).toMatch(/Migration of orders not confirmed; nothing changed/);
    },
    SLOW,
  );

  // Ctrl-C: test/cli/interrupt.test.ts (it stops following; --cancel-on-interrupt cancels).

  it(
    '--args @FILE: arguments past what one command-line argument holds (128 KiB on Linux) reach the tool',
    async () => {
      const title = 'T'.repeat(200_000);
      writeFileSync(join(dir.path, 'long.json'), JSON.stringify({ title, sections: 1, sectionSeconds: 0 }));
      const ran = await terminus(
        ['call', '--url', served.url, 'build_report', '--args', '@long.json', '--ledger', ledger(), '--json'],
        { cwd: dir.path },
      );
      expect(ran.code, ran.stderr).toBe(0);
      expect(JSON.stringify(onlyJson(ran.stdout).result)).toContain(`# ${title}`);
    },
    SLOW,
  );

  it(
    'errors: bad --args JSON and a missing server are usage errors (2)',
    async () => {
      const bad = await terminus(
        ['call', '--url', served.url, 'build_report', '--args', '{nope', '--ledger', ledger()],
        {
          cwd: dir.path,
        },
      );
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--args is not valid JSON/);
      const array = await terminus(
        ['call', '--url', served.url, 'build_report', '--args', '[1]', '--ledger', ledger()],
        {
          cwd: dir.path,
        },
      );
      expect(array.code).toBe(2);
      expect(array.stderr).toMatch(/--args must be a JSON object/);
      for (const [file, message] of [
        ['absent.json', /--args @absent\.json: cannot read it: ENOENT/],
        ['.', /--args @\.: cannot read it: EISDIR/],
        ['array.json', /--args @array\.json must be a JSON object/],
        // 20,000 levels: parsed, then overflowed the stack digesting them (a stack trace, exit 1).
        [
          'deep.json',
          /^terminus call: --args @deep\.json nests deeper than 1000 levels, more than a call can carry\n$/,
        ],
      ] as const) {
        writeFileSync(join(dir.path, 'array.json'), '[1]');
        writeFileSync(join(dir.path, 'deep.json'), `{"title":${'['.repeat(20_000)}${']'.repeat(20_000)}}`);
        const read = await terminus(['call', '--url', served.url, 'build_report', '--args', `@${file}`], {
          cwd: dir.path,
        });
        expect(read.code, read.stderr).toBe(2);
        expect(read.stderr).toMatch(message);
      }
      const none = await terminus(['call', 'build_report', '--ledger', ledger()], { cwd: dir.path });
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(/exactly one of --url URL or --stdio/);
      const flag = await terminus(['call', '--url', served.url, 'build_report', '--wire', 'carrier-pigeon'], {
        cwd: dir.path,
      });
      expect(flag.code).toBe(2);
    },
    SLOW,
  );

  it(
    'errors: an unknown tool is refused (1) with the server message; nothing is left in flight',
    async () => {
      const file = ledger();
      const ran = await terminus(['call', '--url', served.url, 'no_such_tool', '--ledger', file, '--json'], {
        cwd: dir.path,
      });
      expect(ran.code).toBe(1);
      const out = onlyJson(ran.stdout);
      expect(out).toMatchObject({ status: 'refused', operation: { state: 'NEVER_CREATED', taskId: null } });
      expect(out.message).toMatch(/Unknown tool: no_such_tool/);
      expect((await terminus(['ops', 'list', '--json', '--ledger', file], { cwd: dir.path })).stdout).toMatch(
        /"operations":\[\]/,
      );
    },
    SLOW,
  );

  it('errors: an unreachable server fails (1) with a clear message before anything is recorded', async () => {
    const file = ledger();
    const ran = await terminus(['call', '--url', 'http://127.0.0.1:9/mcp', 'build_report', '--ledger', file], {
      cwd: dir.path,
    });
    expect(ran.code, ran.stderr).toBe(1);
    expect(ran.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9\/mcp/);
    const listed = await terminus(['ops', 'list', '--all', '--json', '--ledger', file], { cwd: dir.path });
    expect(listed.code, listed.stderr).toBe(0);
    expect(onlyJson(listed.stdout)).toEqual({ operations: [] });
  });
});
