/**
 * `terminus call` re-attaching to an operation that goes UNKNOWN ends at once: exit 3, the state,
 * the evidence and the next commands, with or without `--budget`, as `terminus ops resume` does. The
 * operation is driven there by a server that forgets its tasks on a restart (the SDK 1.32
 * `InMemoryTaskStore` over stdio: each run spawns a new one): a first executor is killed while the
 * task works, and the task id answers "not found" to the next run.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, built, killAll, onlyJson, ROOT, start, stdioCommand, tempDir, tsNode } from './helpers.js';

const SLOW = 60_000;
const server = stdioCommand(join(ROOT, 'test/fixtures/sdk132-tasks-server.ts'));
const DRIVER = join(ROOT, 'test/fixtures/crash-driver.ts');
const ARGS = '{"ms":600000}';
const dir = tempDir('terminus-unknown-');
let n = 0;

beforeAll(() => assertBuilt());
afterEach(() => killAll());
afterAll(() => dir.remove());

/** A ledger holding one WORKING operation whose executor was killed (kill -9) while it polled. */
async function orphaned(callNode: string): Promise<string> {
  n += 1;
  const ledger = join(dir.path, `ledger-${n}.db`);
  const crashed = await start(tsNode(DRIVER, 'submit', ledger, `stdio:${server}`, callNode, 'sdk_complete', ARGS), {
    cwd: dir.path,
    input: '',
    env: { CRASH_AT: 'polling' },
  }).done;
  expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
  return ledger;
}

const call = (ledger: string, callNode: string, extra: string[]) =>
  built(
    ['call', '--stdio', server, 'sdk_complete', '--args', ARGS, '--ledger', ledger, '--call-node', callNode, ...extra],
    {
      cwd: dir.path,
    },
  );

describe('terminus call on an operation that goes UNKNOWN', () => {
  it(
    'without --budget: exits 3 with the state, the evidence and the next commands',
    async () => {
      const ledger = await orphaned('node-u1');
      const ran = await call(ledger, 'node-u1', []);
      expect(ran.code, ran.stderr).toBe(3);
      expect(ran.stderr).toMatch(/terminus call: unknown \(operation op_\S+, task \S+, UNKNOWN\)/);
      expect(ran.stderr).toMatch(/not_found: poll answered not found/);
      expect(ran.stderr).toMatch(/terminus ops show op_/);
      expect(ran.stderr).toMatch(/terminus ops cancel op_/);
      expect(ran.stderr).toMatch(/operator/);
    },
    SLOW,
  );

  it(
    'with --budget and --json: exits 3 at once with one JSON object (status unknown), not at the budget',
    async () => {
      const ledger = await orphaned('node-u2');
      // A budget far beyond the test's timeout: only an UNKNOWN that ends the command passes.
      const ran = await call(ledger, 'node-u2', ['--budget', '3600', '--json']);
      expect(ran.code, ran.stderr).toBe(3);
      const out = onlyJson(ran.stdout);
      expect(out).toMatchObject({ status: 'unknown', exitCode: 3, attached: true, operation: { state: 'UNKNOWN' } });
      expect(out.message).toMatch(/terminus ops show op_/);
    },
    SLOW,
  );

  it(
    'terminus ops resume ID on the same kind of operation ends the same way',
    async () => {
      const ledger = await orphaned('node-u3');
      const list = await built(['ops', 'list', '--json', '--ledger', ledger], { cwd: dir.path });
      const id = JSON.stringify(list.stdout).match(/op_[0-9a-f-]+/)![0];
      const ran = await built(['ops', 'resume', id, '--ledger', ledger], { cwd: dir.path });
      expect(ran.code, ran.stderr).toBe(3);
      expect(ran.stderr).toMatch(/UNKNOWN/);
      expect(ran.stderr).toContain(`terminus ops show ${id}`);
    },
    SLOW,
  );

  it(
    'terminus ops resume without an ID: the table, and the evidence and next commands of the UNKNOWN one',
    async () => {
      const ledger = await orphaned('node-u4');
      const ran = await built(['ops', 'resume', '--ledger', ledger], { cwd: dir.path });
      expect(ran.code, ran.stderr).toBe(3);
      expect(ran.stdout).toMatch(/node-u4\s+unknown/);
      expect(ran.stderr).toMatch(/not_found: poll answered not found/);
      expect(ran.stderr).toMatch(/terminus ops show op_\S+ --ledger /);
    },
    SLOW,
  );
});
