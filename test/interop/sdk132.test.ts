/**
 * `terminus call --stdio` against a server no one here wrote the protocol code of:
 * `@modelcontextprotocol/sdk` 1.32 with `InMemoryTaskStore` (test/fixtures/sdk132-tasks-server.ts),
 * through the 2025-11-25 client adapter: complete, fail, cancel, and a lost submission, which goes
 * to manual reconciliation because that server has no submission-key lookup (expected, issue 3 #2).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  killAll,
  MAIN,
  onlyJson,
  ROOT,
  start,
  stdioCommand,
  tempDir,
  terminus,
  tsNode,
  type Ran,
} from '../cli/helpers.js';

const SLOW = 180_000;
const FIXTURE = join(ROOT, 'test/fixtures/sdk132-tasks-server.ts');
const DRIVER = join(ROOT, 'test/fixtures/crash-driver.ts');
const dir = tempDir('terminus-sdk132-');
const server = stdioCommand(FIXTURE);
let n = 0;

afterEach(() => killAll());
afterAll(() => dir.remove());

/** A fresh ledger and fixture log per test. */
function files(): { ledger: string; log: string } {
  n += 1;
  return { ledger: join(dir.path, `ledger-${n}.db`), log: join(dir.path, `fixture-${n}.log`) };
}

function facts(log: string): { event: string; taskId?: string; status?: string }[] {
  try {
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { event: string });
  } catch {
    return [];
  }
}

function call(tool: string, args: object, f: { ledger: string; log: string }, extra: string[] = []): Promise<Ran> {
  return start(
    tsNode(
      MAIN,
      'call',
      '--stdio',
      server,
      tool,
      '--args',
      JSON.stringify(args),
      '--ledger',
      f.ledger,
      '--json',
      ...extra,
    ),
    { cwd: dir.path, input: '', env: { FIXTURE_LOG: f.log } },
  ).done;
}

describe('SDK 1.32 InMemoryTaskStore server over stdio (2025-11-25 tasks)', () => {
  it(
    'completes: auto negotiation picks mcp-2025-11-25; the result comes from tasks/result',
    async () => {
      const f = files();
      const ran = await call('sdk_complete', { text: 'hello from 1.32' }, f);
      expect(ran.code, ran.stderr).toBe(0);
      const out = onlyJson(ran.stdout);
      expect(out).toMatchObject({
        status: 'completed',
        operation: { state: 'ACCEPTED', wire: 'mcp-2025-11-25' },
        result: {
          content: [{ type: 'text', text: 'hello from 1.32' }],
          structuredContent: { echo: 'hello from 1.32' },
        },
      });
      expect(facts(f.log).filter((x) => x.event === 'created')).toHaveLength(1);
    },
    SLOW,
  );

  it(
    'fails: a failed task (isError result) is accepted as failed and exits 1',
    async () => {
      const f = files();
      const ran = await call('sdk_fail', {}, f, ['--wire', 'mcp-2025-11-25']);
      expect(ran.code, ran.stderr).toBe(1);
      const out = onlyJson(ran.stdout);
      expect(out).toMatchObject({ status: 'failed', receipt: { status: 'failed' }, operation: { state: 'ACCEPTED' } });
      // The tool's own error survives (the SDK client would have replaced it with a synthetic -32603).
      expect(JSON.stringify(out.result)).toMatch(/simulated tool failure/);
    },
    SLOW,
  );

  it(
    'cancel: with --cancel-on-interrupt, Ctrl-C sends tasks/cancel; the server task is cancelled and never finishes; exit 130',
    async () => {
      const f = files();
      const running = start(
        tsNode(
          MAIN,
          'call',
          '--stdio',
          server,
          'sdk_slow',
          '--args',
          '{"seconds":120}',
          '--ledger',
          f.ledger,
          '--json',
          '--cancel-on-interrupt',
        ),
        { cwd: dir.path, env: { FIXTURE_LOG: f.log } },
      );
      await running.waitFor(/WORKING \(server: working\)/, 'stderr');
      running.child.kill('SIGINT');
      const ran = await running.done;
      expect(ran.code, ran.stderr).toBe(130);
      const out = onlyJson(ran.stdout);
      expect(out).toMatchObject({ status: 'cancelled', operation: { state: 'CANCELLED_ACCEPTED' } });
      const taskId = (out.operation as { taskId: string }).taskId;
      // What the server holds when its client goes away (its worker may not have looked yet).
      expect(facts(f.log)).toContainEqual(
        expect.objectContaining({ event: 'status_at_exit', taskId, status: 'cancelled' }),
      );
      expect(facts(f.log).some((x) => x.event === 'finished')).toBe(false);
    },
    SLOW,
  );

  it(
    'a submission lost after the server created the task goes to manual reconciliation, never a second task',
    async () => {
      const f = files();
      const crashed = await start(
        tsNode(DRIVER, 'submit', f.ledger, `stdio:${server}`, 'node-lost', 'sdk_complete', '{"ms":100}'),
        { cwd: dir.path, input: '', env: { FIXTURE_LOG: f.log, CRASH_AT: 'after_send' } },
      ).done;
      expect(crashed.signal).toBe('SIGKILL');
      expect(facts(f.log).filter((x) => x.event === 'created')).toHaveLength(1);

      const resumed = await start(tsNode(DRIVER, 'resume', f.ledger), {
        cwd: dir.path,
        input: '',
        env: { FIXTURE_LOG: f.log },
      }).done;
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toMatch(/"event":"no_receipt","callNodeId":"node-lost"/);
      // The resumed executor asked for the key (unsupported) and never submitted again.
      expect(facts(f.log).filter((x) => x.event === 'created')).toHaveLength(1);

      const rec = await terminus(['ops', 'reconcile', '--json', '--ledger', f.ledger], { cwd: dir.path });
      const { items } = onlyJson(rec.stdout) as { items: Record<string, unknown>[] };
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({
        callNodeId: 'node-lost',
        state: 'UNKNOWN',
        taskId: null,
        server: `stdio:${server}`,
      });
      expect(items[0]!.submissionKey).toMatch(/^skey_/);
      expect(items[0]!.lastError).toMatch(/^key_lookup_unsupported/);
      expect(items[0]!.evidence).toContainEqual(expect.objectContaining({ kind: 'submit_lost' }));

      const human = await terminus(['ops', 'reconcile', '--ledger', f.ledger], { cwd: dir.path });
      expect(human.stdout).toMatch(/UNKNOWN\s+sdk_complete\s+call node node-lost/);
      expect(human.stdout).toMatch(/task id\s+- \(never acknowledged\)/);
      expect(human.stdout).toContain(`submission key  ${String(items[0]!.submissionKey)}`);
    },
    SLOW,
  );
});
