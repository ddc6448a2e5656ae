/**
 * Credentials at the CLI, against a real `terminus serve --auth-tokens` on loopback. A server that
 * refuses the credentials (HTTP 401/403) is an authentication error that names the flag to pass and
 * exits 4 at once, never "server unreachable" retried until the budget ends; an operation submitted
 * under one credential and resumed under another is refused before anything is sent (the server
 * would answer its task as not found, S8, and the operation went UNKNOWN). Neither changes the
 * operation in the ledger (C4: it stays where it was, still resumable), and the ledger keeps a
 * salted fingerprint of the credential, never the credential.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import type { ToolOperation } from '../../src/executor/operation.js';
import { assertBuilt, built, killAll, onlyJson, startServe, tempDir, type Served } from './helpers.js';

const dir = tempDir('terminus-auth-cli-');
const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef01';
let served: Served;
let n = 0;
const SLOW = 180_000;
const ledgerFile = (): string => join(dir.path, `ledger-${(n += 1)}`, 'ledger.db');
const long = (title: string): string => JSON.stringify({ title, sections: 300, sectionSeconds: 1 });

beforeAll(async () => {
  assertBuilt();
  const tokens = join(dir.path, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ [ALICE]: 'alice', [BOB]: 'bob' }));
  served = await startServe(dir.path, ['--auth-tokens', tokens]);
}, SLOW);
afterAll(async () => {
  await served.stop();
  killAll();
  dir.remove();
});

async function load(file: string, id: string): Promise<ToolOperation> {
  const ledger = openSqliteLedger({ path: file });
  try {
    return (await ledger.load(id))!;
  } finally {
    await ledger.close();
  }
}

/** Alice's call of a long report, detached after 1 s: its operation id. */
async function detachedCall(file: string, title: string): Promise<string> {
  const args = ['call', '--url', served.url, 'build_report', '--args', long(title), '--ledger', file];
  const ran = await built([...args, '--token', ALICE, '--budget', '1', '--json'], {
    cwd: dir.path,
    env: { TERMINUS_TOKEN: '' },
  });
  expect(ran.code, ran.stderr).toBe(3);
  return (onlyJson(ran.stdout).operation as { id: string }).id;
}

/** What a refused command may not change: the state, the history, the evidence, the revision. */
const unchanged = (record: ToolOperation) => ({
  state: record.state,
  history: record.history,
  evidence: record.evidence,
  revision: record.revision,
  cancelGeneration: record.cancelGeneration,
});

const env = { TERMINUS_TOKEN: '' };

describe('ops resume under credentials', () => {
  it(
    'without a token: exit 4 at once naming --token, nothing sent, the operation unchanged and still resumable',
    async () => {
      const file = ledgerFile();
      const opId = await detachedCall(file, 'no-token');
      const before = await load(file, opId);
      expect(before.state).toBe('WORKING');
      // The budget is 10 minutes: a refusal taken for an outage would be retried until the test times out.
      const ran = await built(['ops', 'resume', opId, '--ledger', file, '--budget', '600'], { cwd: dir.path, env });
      expect(ran.code, ran.stderr).toBe(4);
      expect(ran.stderr).toMatch(
        new RegExp(`terminus ops resume: unauthorized \\(operation ${opId}, task \\S+, WORKING\\)`),
      );
      expect(ran.stderr).toMatch(
        /was submitted with a credential and this command passes none: pass the same --token T/,
      );
      expect(ran.stderr).toMatch(/nothing was sent, the operation is unchanged \(WORKING\)/);
      expect(ran.stderr).not.toMatch(/unreachable|retrying/);
      expect(unchanged(await load(file, opId))).toEqual(unchanged(before));

      // --json: the same outcome as one object.
      const json = await built(['ops', 'resume', opId, '--ledger', file, '--json'], { cwd: dir.path, env });
      expect(json.code).toBe(4);
      expect(onlyJson(json.stdout)).toMatchObject({ status: 'unauthorized', exitCode: 4, operation: { id: opId } });

      // The owner's token still follows it (C4, C11): nothing was lost.
      const again = await built(['ops', 'resume', opId, '--ledger', file, '--token', ALICE, '--budget', '1'], {
        cwd: dir.path,
        env,
      });
      expect(again.code, again.stderr).toBe(3);
      expect((await load(file, opId)).state).toBe('WORKING');
      const cancelled = await built(['ops', 'cancel', opId, '--ledger', file, '--token', ALICE], {
        cwd: dir.path,
        env,
      });
      expect(cancelled.code, cancelled.stderr).toBe(0);
    },
    SLOW,
  );

  it(
    "with another caller's token: refused before anything is sent (exit 4), never UNKNOWN; the owner's token still resumes",
    async () => {
      const file = ledgerFile();
      const opId = await detachedCall(file, 'other-token');
      const before = await load(file, opId);
      const ran = await built(['ops', 'resume', opId, '--ledger', file, '--token', BOB], { cwd: dir.path, env });
      expect(ran.code, ran.stderr).toBe(4);
      expect(ran.stderr).toMatch(/was submitted under another credential than this command's --token\/--header/);
      expect(ran.stderr).toMatch(/if the same principal holds a new token, add --credential-changed/);
      expect(ran.stderr).not.toMatch(/UNKNOWN/);
      expect(unchanged(await load(file, opId))).toEqual(unchanged(before));

      // Every command that reaches the server checks it: cancel and logs as well.
      const cancel = await built(['ops', 'cancel', opId, '--ledger', file, '--token', BOB], { cwd: dir.path, env });
      expect(cancel.code, cancel.stderr).toBe(4);
      const logs = await built(['ops', 'logs', opId, '--ledger', file, '--token', BOB], { cwd: dir.path, env });
      expect(logs.code, logs.stderr).toBe(4);
      // `ops resume` of everything in flight skips it, says why, and exits 4.
      const all = await built(['ops', 'resume', '--ledger', file, '--token', BOB, '--json'], { cwd: dir.path, env });
      expect(all.code, all.stderr).toBe(4);
      expect(onlyJson(all.stdout)).toMatchObject({ operations: [{ operationId: opId, outcome: 'identity_mismatch' }] });
      expect(unchanged(await load(file, opId))).toEqual(unchanged(before));

      const owner = await built(['ops', 'cancel', opId, '--ledger', file, '--token', ALICE], { cwd: dir.path, env });
      expect(owner.code, owner.stderr).toBe(0);
      expect((await load(file, opId)).state).toBe('CANCELLED_ACCEPTED');
    },
    SLOW,
  );

  it(
    'a server that refuses the credentials (401) is an authentication error at once, not an outage; the record is unchanged',
    async () => {
      const file = ledgerFile();
      const opId = await detachedCall(file, 'refused');
      const before = await load(file, opId);
      // --credential-changed skips the local check, so the request reaches the server without a token.
      const ran = await built(['ops', 'resume', opId, '--ledger', file, '--credential-changed', '--budget', '600'], {
        cwd: dir.path,
        env,
      });
      expect(ran.code, ran.stderr).toBe(4);
      expect(ran.stderr).toMatch(
        /refused the credentials \(HTTP 401: Authentication required[^)]*\): pass --token T \(or TERMINUS_TOKEN\) or --header 'Authorization: …'/,
      );
      expect(ran.stderr).toMatch(new RegExp(`the operation is unchanged \\(WORKING\\): terminus ops resume ${opId}`));
      expect(ran.stderr).not.toMatch(/unreachable|retrying/);
      // The refused waiter stopped waiting (C9), as on a disconnect; nothing else moved.
      const after = await load(file, opId);
      expect({ ...unchanged(after), revision: 0 }).toEqual({ ...unchanged(before), revision: 0 });
      expect(after.waitingStoppedAt).not.toBeNull();
      const owner = await built(['ops', 'cancel', opId, '--ledger', file, '--token', ALICE], { cwd: dir.path, env });
      expect(owner.code, owner.stderr).toBe(0);
    },
    SLOW,
  );
});

describe('terminus call under credentials', () => {
  it(
    'without a token: exit 4 with the flag to pass, on the negotiated and on an explicit wire (nothing created)',
    async () => {
      const file = ledgerFile();
      const args = ['call', '--url', served.url, 'build_report', '--args', long('call'), '--ledger', file, '--json'];
      const negotiated = await built(args, { cwd: dir.path, env });
      expect(negotiated.code, negotiated.stderr).toBe(4);
      expect(onlyJson(negotiated.stdout)).toMatchObject({ status: 'unauthorized', exitCode: 4 });
      const explicit = await built([...args, '--wire', 'mcp-tasks-ext'], { cwd: dir.path, env });
      expect(explicit.code, explicit.stderr).toBe(4);
      const json = onlyJson(explicit.stdout);
      expect(json).toMatchObject({ status: 'unauthorized', exitCode: 4, operation: { state: 'NEVER_CREATED' } });
      expect(json.message).toMatch(/refused the credentials \(HTTP 401[^)]*\): pass --token T/);
      expect(json.message).toMatch(/nothing was created/);
      // terminus tools: the same error and exit code, and with the token the list.
      const tools = await built(['tools', '--url', served.url], { cwd: dir.path, env });
      expect(tools.code, tools.stderr).toBe(4);
      expect(tools.stderr).toMatch(/refused the credentials \(HTTP 401[^)]*\): pass --token T/);
      expect((await built(['tools', '--url', served.url, '--token', ALICE], { cwd: dir.path, env })).code).toBe(0);
    },
    SLOW,
  );

  it(
    'another caller running the same command is refused (exit 4, --new named), and the ledger holds no token',
    async () => {
      const file = ledgerFile();
      const opId = await detachedCall(file, 'same-command');
      const args = ['call', '--url', served.url, 'build_report', '--args', long('same-command'), '--ledger', file];
      const bob = await built([...args, '--token', BOB], { cwd: dir.path, env });
      expect(bob.code, bob.stderr).toBe(4);
      expect(bob.stderr).toMatch(new RegExp(`re-attaching to operation ${opId}`));
      expect(bob.stderr).toMatch(/submitted under another credential .*; --new starts an operation of your own/);
      const record = await load(file, opId);
      expect(record.state).toBe('WORKING');
      expect(record.identity).toMatch(/^[0-9a-f]{64}$/);
      for (const name of ['ledger.db', 'ledger.db-wal']) {
        let bytes = '';
        try {
          bytes = readFileSync(join(file, '..', name)).toString('latin1');
        } catch {
          continue;
        }
        expect(bytes).not.toContain(ALICE);
        expect(bytes).not.toContain(BOB);
      }
      const owner = await built(['ops', 'cancel', opId, '--ledger', file, '--token', ALICE], { cwd: dir.path, env });
      expect(owner.code, owner.stderr).toBe(0);
    },
    SLOW,
  );
});
