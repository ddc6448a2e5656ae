/**
 * `terminus ops resume ID` ends as `terminus call` does for the same receipt: the result on stdout,
 * the receipt line on stderr, the same exit code and, with `--json`, the same object (it printed a
 * table of one row). Following again after a detach, the first progress shown is the server's
 * current one, not the copy the ledger kept from the detached run.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { assertBuilt, BUILT, built, killAll, onlyJson, start, startServe, tempDir, type Served } from './helpers.js';
import { startSteppedServer, STEPS } from './stepped-server.js';

const dir = tempDir('terminus-ops-resume-');
let served: Served;
const SLOW = 180_000;

beforeAll(async () => {
  assertBuilt();
  served = await startServe(dir.path);
}, SLOW);
afterAll(async () => {
  await served.stop();
  killAll();
  dir.remove();
});

/** A `build_report` call that detaches after `budget` seconds; its operation id. */
async function detached(ledger: string, title: string, sectionSeconds: number, budget = 1): Promise<string> {
  const args = JSON.stringify({ title, sections: 8, sectionSeconds });
  const call = start(
    [
      BUILT,
      'call',
      '--url',
      served.url,
      'build_report',
      '--args',
      args,
      '--ledger',
      ledger,
      '--budget',
      String(budget),
    ],
    {
      cwd: dir.path,
    },
  );
  call.child.stdin!.end();
  const ran = await call.done;
  expect(ran.code, ran.stderr).toBe(3);
  return /terminus call: detached \(operation (op_\S+),/.exec(ran.stderr)![1]!;
}

describe('ops resume ID', () => {
  it(
    'prints what terminus call prints for the receipt: result on stdout, receipt line on stderr, exit 0; --json the same object',
    async () => {
      const ledger = join(dir.path, 'print', 'ledger.db');
      const opId = await detached(ledger, 'printed', 0.3);
      const resumed = await built(['ops', 'resume', opId, '--ledger', ledger], { cwd: dir.path });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toMatch(/^# printed\nsection 1: /);
      expect(resumed.stdout).not.toMatch(/OPERATION|OUTCOME/);
      expect(resumed.stderr).toMatch(
        new RegExp(`completed: receipt rcpt_\\S+ \\(operation ${opId}, task \\S+, ACCEPTED\\)`),
      );

      // The same operation again (ended now): the object `terminus call --json` prints for its receipt.
      const again = await built(['ops', 'resume', opId, '--ledger', ledger, '--json'], { cwd: dir.path });
      expect(again.code, again.stderr).toBe(0);
      const json = onlyJson(again.stdout);
      expect(json).toMatchObject({
        status: 'completed',
        isError: false,
        exitCode: 0,
        attached: true,
        operation: { id: opId, state: 'ACCEPTED', server: served.url },
        receipt: { status: 'completed' },
        result: { structuredContent: { title: 'printed' } },
      });
      const call = await built(
        [
          'call',
          '--url',
          served.url,
          'build_report',
          '--args',
          JSON.stringify({ title: 'printed', sections: 8, sectionSeconds: 0.3 }),
          '--ledger',
          ledger,
          '--json',
          '--new',
        ],
        { cwd: dir.path },
      );
      expect(Object.keys(json).sort()).toEqual(Object.keys(onlyJson(call.stdout)).sort());
    },
    SLOW,
  );

  it.each([
    ['ops resume ID', true],
    ['ops resume (every operation in flight)', false],
  ])(
    "%s: following again after a detach first shows the server's current progress, not the ledger's stale copy",
    async (_name, byId) => {
      // The server's progress moves only when the test says: 1 before the detach, 5 while resuming.
      const stepped = await startSteppedServer();
      try {
        const ledger = join(dir.path, byId ? 'progress-one' : 'progress-all', 'ledger.db');
        const call = start([BUILT, 'call', '--url', stepped.url, 'stepped', '--ledger', ledger], { cwd: dir.path });
        call.child.stdin!.end();
        await stepped.advanceTo(1);
        await call.waitFor(/\(1\/8\)/, 'stderr');
        call.child.kill('SIGINT');
        const ran = await call.done;
        expect(ran.code, ran.stderr).toBe(3);
        const opId = /terminus call: detached \(operation (op_\S+),/.exec(ran.stderr)![1]!;
        const l = openSqliteLedger({ path: ledger });
        const record = (await l.load(opId))!;
        await l.close();
        // The detached run kept the server's report of step 1: what a stale first line would show.
        expect(record.progress?.done).toBe(1);
        await stepped.advanceTo(5);
        const resumed = start([BUILT, 'ops', 'resume', ...(byId ? [opId] : []), '--ledger', ledger], {
          cwd: dir.path,
        });
        resumed.child.stdin!.end();
        // The server holds step 5 until the resume showed a progress: that first one is the test.
        await resumed.waitFor(/\(\d\/8\)/, 'stderr');
        await stepped.advanceTo(STEPS);
        const done = await resumed.done;
        expect(done.code, done.stderr).toBe(0);
        const shown = [...done.stderr.matchAll(/\((\d+)\/8\)/g)].map((m) => Number(m[1]));
        expect(shown[0], done.stderr).toBe(5);
        expect(shown, done.stderr).not.toContain(1);
      } finally {
        await stepped.close();
      }
    },
    SLOW,
  );
});
