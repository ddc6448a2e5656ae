/**
 * A session-bound task taken up again after a crash: the SDK 1.32 task server over its sessionful
 * Streamable HTTP (`InMemoryTaskStore` binds every task to the session that created it; another
 * session is told "not found"). `terminus call` is killed (SIGKILL) while the task works, and the
 * same command again continues the session kept in the ledger and ends with the receipt, not
 * UNKNOWN. When the server no longer knows the session, the call ends UNKNOWN with evidence saying
 * so. The session id is a secret: `ops show` never prints it, the ledger is the user's only.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  BUILT,
  built,
  killAll,
  ROOT,
  start,
  startServe,
  tempDir,
  tsNode,
  type Running,
  type Served,
} from '../cli/helpers.js';

const SLOW = 90_000;
const FIXTURE = join(ROOT, 'test/fixtures/sdk132-tasks-server.ts');
const dir = tempDir('terminus-session-');
const fixtureLog = join(dir.path, 'fixture.log');
let url: string;
let n = 0;

beforeAll(async () => {
  assertBuilt();
  const server = start(tsNode(FIXTURE), { cwd: dir.path, env: { FIXTURE_HTTP: '1', FIXTURE_LOG: fixtureLog } });
  url = (await server.waitFor(/http:\/\/127\.0\.0\.1:\d+\/mcp/, 'stdout')).trim();
}, SLOW);
afterAll(() => {
  killAll();
  dir.remove();
});

/** A fresh state folder (so a fresh default ledger) for one scenario. */
function home(): { env: NodeJS.ProcessEnv; ledger: string; folder: string } {
  n += 1;
  const state = join(dir.path, `state-${n}`);
  return {
    env: { XDG_STATE_HOME: state },
    ledger: join(state, 'terminus', 'ledger.db'),
    folder: join(state, 'terminus'),
  };
}

const ARGS = (seconds: number) => ['call', '--url', url, 'sdk_slow', '--args', JSON.stringify({ seconds })];

/** `terminus call` killed with SIGKILL once its task works on the server. */
async function crashWhileWorking(seconds: number, env: NodeJS.ProcessEnv, args = ARGS(seconds)): Promise<void> {
  const running: Running = start([BUILT, ...args], { cwd: dir.path, env, input: '' });
  await running.waitFor(/WORKING \(server: working\)/, 'stderr');
  running.child.kill('SIGKILL');
  expect((await running.done).signal).toBe('SIGKILL');
}

function storedSession(ledger: string): { id: string; protocolVersion: string } {
  const db = new Database(ledger, { readonly: true });
  try {
    const row = db.prepare('SELECT session FROM operations').get() as { session: string | null };
    return JSON.parse(row.session ?? 'null') as { id: string; protocolVersion: string };
  } finally {
    db.close();
  }
}

const createdTasks = (): number =>
  (existsSync(fixtureLog) ? readFileSync(fixtureLog, 'utf8') : '')
    .split('\n')
    .filter((l) => l.includes('"event":"created"')).length;

describe('a task bound to its HTTP session, taken up again after terminus call was killed', () => {
  it(
    'the same command again continues the session and ends with the receipt; one task was created',
    async () => {
      const { env, ledger, folder } = home();
      const before = createdTasks();
      await crashWhileWorking(4, env);
      const again = await built(ARGS(4), { cwd: dir.path, env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('slow done');
      expect(again.stderr).toMatch(/completed: receipt rcpt_/);
      expect(createdTasks() - before).toBe(1);
      const session = storedSession(ledger);
      expect(session.protocolVersion).toBe('2025-11-25');

      // The id is a secret: kept, never shown.
      const list = await built(['ops', 'list', '--all', '--json'], { cwd: dir.path, env });
      const id = /op_[0-9a-f-]+/.exec(list.stdout)![0];
      const shown = await built(['ops', 'show', id], { cwd: dir.path, env });
      expect(shown.stdout).toMatch(/session\s+an HTTP session \(2025-11-25, id not shown\)/);
      const json = await built(['ops', 'show', id, '--json'], { cwd: dir.path, env });
      expect(JSON.parse(json.stdout).operation.session).toEqual({ id: '<redacted>', protocolVersion: '2025-11-25' });
      for (const out of [again, list, shown, json]) expect(out.stdout + out.stderr).not.toContain(session.id);
      expect(statSync(ledger).mode & 0o777).toBe(0o600);
      expect(statSync(folder).mode & 0o777).toBe(0o700);
    },
    SLOW,
  );

  it(
    'a session the server no longer knows: UNKNOWN at once, the evidence says why, and no second task',
    async () => {
      const { env, ledger } = home();
      const before = createdTasks();
      await crashWhileWorking(60, env);
      const session = storedSession(ledger);
      // The session ends (the client's DELETE): the server forgets it, its task stays bound to it.
      const ended = await fetch(url, {
        method: 'DELETE',
        headers: { 'mcp-session-id': session.id, 'mcp-protocol-version': session.protocolVersion },
      });
      expect(ended.status).toBe(200);
      const again = await built(ARGS(60), { cwd: dir.path, env });
      expect(again.code, again.stderr).toBe(3);
      expect(again.stderr).toMatch(
        /not_found: poll answered not found before expiry: the server no longer knows the HTTP session/,
      );
      expect(again.stdout + again.stderr).not.toContain(session.id);
      expect(createdTasks() - before).toBe(1);
    },
    SLOW,
  );
});

describe('terminus serve without authentication binds 2025-era tasks to the session too', () => {
  let served: Served;
  beforeAll(async () => {
    served = await startServe(dir.path);
  }, SLOW);
  afterAll(async () => {
    await served.stop();
  });

  it.each(['mcp-2025-11-25', 'sep-1391'])(
    '%s: killed while the task works, the same command again ends with the receipt',
    async (wire) => {
      const { env } = home();
      const args = [
        'call',
        '--url',
        served.url,
        '--wire',
        wire,
        'build_report',
        '--args',
        JSON.stringify({ title: wire, sections: 3, sectionSeconds: 1 }),
      ];
      await crashWhileWorking(0, env, args);
      const again = await built(args, { cwd: dir.path, env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain(`# ${wire}`);
    },
    SLOW,
  );
});
