/**
 * A usage error exits 2 on every `terminus` command, never 1: 1 says a gate failed, a call failed
 * or a server could not start, and a script must tell them apart. Before, `gate`, `serve`, `worker`,
 * `bridge` and the program itself exited 1 on an unknown option.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';

const terminus = (...args: string[]) =>
  spawnSync('node', ['dist/cli/main.js', ...args], { encoding: 'utf8', timeout: 60_000 });

describe('usage errors', () => {
  it.each([
    ['gate', '--bogus'],
    ['gate', '--series', 'abc'],
    ['serve', '--bogus'],
    ['serve', '--port', 'abc'],
    ['worker', '--bogus'],
    ['bridge', '--bogus'],
    ['call', '--bogus'],
    ['ops', 'show'],
    ['tools', '--bogus'],
    ['--bogus'],
    ['nosuch'],
  ])('terminus %s %s exits 2 with the error on stderr', (...args) => {
    const run = terminus(...args);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^error: /);
    expect(run.stdout).toBe('');
  });

  it.each([
    [['serve', '--port', '0', '--worker-heap-mb', '300'], '--worker-heap-mb applies'],
    [['worker', '--worker-memory-mb', '600', '--workers-nice', '5'], '--worker-memory-mb and --workers-nice apply'],
    [
      ['serve', '--workers', '1', '--worker-heap-mb', '8'],
      "argument '8' is invalid. not a whole number of at least 16",
    ],
  ])('terminus %s: a worker limit without --workers, or too small, exits 2 and opens no database', (args, said) => {
    const dir = mkdtempSync(join(tmpdir(), 'terminus-workers-'));
    try {
      const run = terminus(...args, '--db', join(dir, 'tasks.db'));
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(said);
      expect(run.stdout).toBe('');
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('a --url without its scheme says so and gives it with http:// (it said "Invalid URL")', () => {
    const dir = mkdtempSync(join(tmpdir(), 'terminus-url-'));
    const ledger = join(dir, 'ledger.db');
    beforeAll(async () => {
      await openSqliteLedger({ path: ledger }).close();
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    it.each([
      ['127.0.0.1:3000/mcp', ['call', 'echo', '--ledger', ledger, '--url']],
      ['localhost:3000', ['call', 'echo', '--ledger', ledger, '--url']],
      ['127.0.0.1:3000/mcp', ['tools', '--url']],
      ['localhost:3000', ['tools', '--url']],
      ['127.0.0.1:3000/mcp', ['ops', 'resume', '--ledger', ledger, '--url']],
      ['localhost:3000', ['ops', 'cancel', 'op_none', '--ledger', ledger, '--url']],
      ['127.0.0.1:3000/mcp', ['bridge', '--ledger', ledger, '--upstream']],
      ['localhost:3000', ['bridge', '--ledger', ledger, '--upstream', 'up=']],
    ])('%s: terminus %s', (url, args) => {
      const last = args.at(-1)!;
      const argv = last.endsWith('=') ? [...args.slice(0, -1), `${last}${url}`] : [...args, url];
      const run = terminus(...argv);
      expect(run.stderr).toContain(`${url} lacks its scheme: use http://${url}`);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
    });
  });

  it('help and the version still exit 0', () => {
    for (const args of [['--help'], ['gate', '--help'], ['serve', '--help'], ['--version']]) {
      expect(terminus(...args).status).toBe(0);
    }
  });

  it('gate: --faults that cannot apply on the wire are named with the reason; none applying, or none given, is a usage error', () => {
    const none = terminus('gate', '--wire', 'sep-1391', '--faults', 'result_changed', '--series', '2');
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('terminus gate: result_changed does not apply on sep-1391: the result is read apart');
    expect(none.stderr).toContain('terminus gate: none of --faults applies on sep-1391: give a class that does');
    expect(none.stdout).toBe('');
    const some = terminus(
      'gate',
      '--wire',
      'sep-1391',
      '--faults',
      'result_changed,drop',
      '--series',
      '2',
      '--workers',
      '1',
    );
    expect(some.status).toBe(0);
    expect(some.stderr).toContain('result_changed does not apply on sep-1391');
    expect(some.stdout).toMatch(/^2 series in [\d.]+ s: PASS$/m);
    const empty = terminus('gate', '--faults', ',', '--series', '2');
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain('give at least one of submit_response_lost');
  });
});
