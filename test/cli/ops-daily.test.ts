/**
 * `terminus ops` for daily use (issue 11): the ledger in the user's state directory (found from
 * any folder), `ops result` / `ops show` printing the accepted result, id prefixes, `ops resume ID`
 * with a fresh budget and progress while it waits, `ops prune`, and an outage shown while following
 * (defect 6: unreachable, retrying in N s, then progress again).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { assertBuilt, BUILT, built, killAll, onlyJson, start, startServe, tempDir, type Served } from './helpers.js';
import { startSteppedServer, STEPS } from './stepped-server.js';

const dir = tempDir('terminus-ops-daily-');
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

describe('the default ledger', () => {
  it(
    'lives in $XDG_STATE_HOME/terminus/ledger.db, so ops finds a call from another folder; TERMINUS_LEDGER overrides',
    async () => {
      const state = join(dir.path, 'state');
      const here = join(dir.path, 'project-a');
      const there = join(dir.path, 'project-b');
      mkdirSync(here);
      mkdirSync(there);
      const env = { XDG_STATE_HOME: state, TERMINUS_LEDGER: '' };
      const call = await built(
        [
          'call',
          '--url',
          served.url,
          'build_report',
          '--args',
          '{"title":"xdg","sections":2,"sectionSeconds":0.05}',
          '--json',
        ],
        { cwd: here, env },
      );
      expect(call.code, call.stderr).toBe(0);
      const opId = (onlyJson(call.stdout).operation as { id: string }).id;
      const listed = onlyJson((await built(['ops', 'list', '--all', '--json'], { cwd: there, env })).stdout);
      expect(listed.operations).toEqual([expect.objectContaining({ id: opId, state: 'ACCEPTED' })]);
      const ledger = openSqliteLedger({ path: join(state, 'terminus', 'ledger.db') });
      expect((await ledger.load(opId))?.state).toBe('ACCEPTED');
      await ledger.close();

      // The result, by a prefix of the id, from the other folder: the payload as accepted.
      const result = await built(['ops', 'result', opId.slice(0, 10)], { cwd: there, env });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^# xdg\nsection 1: /);
      const json = onlyJson((await built(['ops', 'result', opId, '--json'], { cwd: there, env })).stdout);
      expect(json).toMatchObject({ structuredContent: { title: 'xdg' } });
      const shown = await built(['ops', 'show', opId.slice(0, 10)], { cwd: there, env });
      expect(shown.stdout).toMatch(/\nresult\n {2}# xdg\n {2}section 1: /);

      const other = join(dir.path, 'other.db');
      const overridden = await built(['ops', 'list', '--all', '--json'], {
        cwd: there,
        env: { ...env, TERMINUS_LEDGER: other },
      });
      expect(overridden.code).toBe(2);
      expect(overridden.stderr).toMatch(new RegExp(`no ledger at ${other.replaceAll('.', '\\.')}`));
      expect((await built(['ops', 'result', 'op_'], { cwd: there, env })).stderr).toMatch(/prefixes need 4 characters/);
    },
    SLOW,
  );
});

describe('ops resume ID, ops prune', () => {
  it(
    'resume follows one detached operation to its receipt with progress; prune forgets it after the bound, not before',
    async () => {
      const file = join(dir.path, 'resume', 'ledger.db');
      // The server's progress moves only when the test says, so the budget always runs out first and
      // the resume always sees the task working.
      const stepped = await startSteppedServer();
      try {
        stepped.allow(1);
        const call = start(
          [BUILT, 'call', '--url', stepped.url, 'stepped', '--ledger', file, '--json', '--budget', '1'],
          { cwd: dir.path },
        );
        const ran = await call.done;
        expect(ran.code, ran.stderr).toBe(3);
        const detached = onlyJson(ran.stdout);
        expect(detached.message).toMatch(
          /wait budget used up; the task keeps running\n {2}follow again: terminus ops resume op_/,
        );
        const opId = (detached.operation as { id: string }).id;

        // C11: a fresh budget, long after the first one ran out; progress is shown while it waits.
        await stepped.advanceTo(3);
        const resuming = start([BUILT, 'ops', 'resume', opId.slice(0, 12), '--ledger', file, '--json'], {
          cwd: dir.path,
        });
        resuming.child.stdin!.end();
        await resuming.waitFor(/WORKING \(server: working\) {2}\[#*-*\] +\d+% \(3\/8\)/, 'stderr');
        await stepped.advanceTo(STEPS);
        const resumed = await resuming.done;
        expect(resumed.code, resumed.stderr).toBe(0);
        expect(onlyJson(resumed.stdout)).toMatchObject({ status: 'completed', exitCode: 0, operation: { id: opId } });
        expect(resumed.stderr).toMatch(/ACCEPTED/);
        await pruneChecks(file, opId);
      } finally {
        await stepped.close();
      }
    },
    SLOW,
  );
});

/** `ops prune` of the settled operation `opId`: kept before the bound, listed by --dry-run, then gone. */
async function pruneChecks(file: string, opId: string): Promise<void> {
  const young = await built(['ops', 'prune', '--older-than', '1h', '--ledger', file, '--json'], { cwd: dir.path });
  expect(onlyJson(young.stdout)).toMatchObject({ pruned: [] });
  await new Promise((r) => setTimeout(r, 1_100));
  // --dry-run names what would go and deletes nothing.
  const dry = await built(['ops', 'prune', '--older-than', '1s', '--dry-run', '--ledger', file, '--json'], {
    cwd: dir.path,
  });
  expect(onlyJson(dry.stdout)).toMatchObject({ dryRun: true, wouldPrune: [opId] });
  const dryText = await built(['ops', 'prune', '--older-than', '1s', '--dry-run', '--ledger', file], {
    cwd: dir.path,
  });
  expect(dryText.stdout).toMatch(/would prune 1 operation\(s\) settled before .*\(dry run: nothing deleted\)\n {2}op_/);
  expect(
    onlyJson((await built(['ops', 'list', '--all', '--json', '--ledger', file], { cwd: dir.path })).stdout),
  ).toMatchObject({ operations: [{ id: opId }] });
  const old = await built(['ops', 'prune', '--older-than', '1s', '--ledger', file], { cwd: dir.path });
  expect(old.code).toBe(0);
  expect(old.stdout).toMatch(/pruned 1 operation\(s\) settled before/);
  expect(
    onlyJson((await built(['ops', 'list', '--all', '--json', '--ledger', file], { cwd: dir.path })).stdout),
  ).toEqual({
    operations: [],
  });
}

describe('following through an outage (defect 6)', () => {
  it(
    'a server that goes away is shown as unreachable with the next retry, and the call still completes when it is back',
    async () => {
      const own = await startServe(join(dir.path));
      const port = new URL(own.url).port;
      const file = join(dir.path, 'outage', 'ledger.db');
      const call = start(
        [
          BUILT,
          'call',
          '--url',
          own.url,
          'build_report',
          '--args',
          '{"title":"outage","sections":6,"sectionSeconds":1}',
          '--ledger',
          file,
          '--json',
        ],
        { cwd: dir.path },
      );
      // A report with its total before the outage: the final 100 % line is drawn from the total the
      // CLI has seen (a finished task carries no progress), and after a restart under load the first
      // successful read may already find the task completed.
      await call.waitFor(/WORKING \(server: working\) .*\(\d\/6\)/, 'stderr');
      await own.stop();
      await call.waitFor(/server unreachable, retrying in \d+ s \(attempt \d+\): connect ECONNREFUSED/, 'stderr');
      const back = await startServe(dir.path, ['--port', port]);
      try {
        const ran = await call.done;
        expect(ran.code, ran.stderr).toBe(0);
        expect(ran.stderr).toMatch(/WORKING \(server last said: working\) {2}server unreachable/);
        expect(ran.stderr).toMatch(/100% \(6\/6\)/);
        expect(onlyJson(ran.stdout)).toMatchObject({ status: 'completed', isError: false });
      } finally {
        await back.stop();
      }
    },
    SLOW,
  );
});
