/**
 * A hostile upstream (test/bridge/fixtures/hostile-server.ts, raw JSON-RPC on the 2025-11-25 task
 * wire) whose answers are malformed on purpose, and a plain one beside it. Nothing malformed is
 * believed (C13's spirit): a task id `../../etc` is never taken (the call ends UNKNOWN, never
 * re-sent), a `working` answer carrying a result is not a completion, a result that is not a
 * CallToolResult is never accepted (UNKNOWN), unknown statuses and wrong types are refused and
 * shown to the model as the reason the bridge keeps asking, huge values are cut or clamped, and the
 * tools no host would accept are left out of the list. The other upstream answers throughout.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, ROOT, stdioCommand, tempDir } from '../cli/helpers.js';
import { connectBridge, hostCall, ledgerIn, operationOf, textOf, waitResult, type BridgeClient } from './helpers.js';

const SLOW = 120_000;
const HOSTILE = join(ROOT, 'test/bridge/fixtures/hostile-server.ts');
const PLAIN = join(ROOT, 'test/bridge/fixtures/plain-server.ts');
const dir = tempDir('terminus-bridge-hostile-');
const ledger = ledgerIn(dir.path, 'hostile');
let bridge: BridgeClient;
let stderr = '';

beforeAll(async () => {
  bridge = await connectBridge({
    ledger,
    upstreams: [`evil=stdio:${stdioCommand(HOSTILE)}`, `plain=stdio:${stdioCommand(PLAIN)}`],
    onStderr: (text) => (stderr += text),
  });
}, SLOW);
afterAll(async () => {
  await bridge?.close();
  killAll();
  dir.remove();
});

/** The task ids the ledger holds, from its records. */
function ledgerTaskIds(): (string | null)[] {
  const sqlite = new Database(ledger, { readonly: true, fileMustExist: true });
  try {
    return (sqlite.prepare('SELECT id FROM operations').all() as { id: string }[]).map((row) => {
      const record = JSON.stringify(sqlite.prepare('SELECT * FROM operations WHERE id = ?').get(row.id));
      return /"taskId\\":\\"([^\\]*)\\"/.exec(record)?.[1] ?? null;
    });
  } finally {
    sqlite.close();
  }
}

const plainStillAnswers = async (): Promise<void> => {
  expect((await hostCall(bridge.client, 'plain__add', { a: 20, b: 22 })).structuredContent).toEqual({ sum: 42 });
};

describe('terminus bridge in front of an upstream whose answers are malformed', () => {
  it('tools/list leaves out the entries no host would take, and says which', async () => {
    const names = (await bridge.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['evil__evil', 'plain__add']));
    expect(names.filter((n) => n.startsWith('evil__'))).toEqual(['evil__evil']);
    expect(stderr).toMatch(/upstream tool left out of the list .*"tool":"no_schema".*inputSchema/);
    expect(stderr).toMatch(/upstream tool left out of the list .*"tool":"has spaces"/);
  });

  it(
    'a task id "../../etc" is never taken: the call ends UNKNOWN with why, and is not sent again',
    async () => {
      const answer = await hostCall(bridge.client, 'evil__evil', { mode: 'traversal' });
      const op = operationOf(answer);
      const settled = op.state === 'UNKNOWN' ? answer : await waitResult(bridge.client, op.id);
      expect(operationOf(settled).state).toBe('UNKNOWN');
      expect(textOf(settled)).toMatch(/taskId "\.\.\/\.\.\/etc" is not a task id/);
      expect(ledgerTaskIds()).not.toContain('../../etc');
      await plainStillAnswers();
    },
    SLOW,
  );

  it(
    'a working answer carrying a result, wrong types: never a completion; the model is told why the bridge keeps asking',
    async () => {
      for (const [mode, why] of [
        ['contradiction', /a working task carries a result/],
        ['wrong-types', /task has no taskId|is not a task id/],
      ] as const) {
        const op = operationOf(await hostCall(bridge.client, 'evil__evil', { mode }));
        let last = await hostCall(bridge.client, 'terminus_status', { operation: op.id });
        for (let i = 0; i < 20 && !why.test(textOf(last)); i++) {
          last = await hostCall(bridge.client, 'terminus_wait', { operation: op.id, seconds: 0.5 });
        }
        expect(operationOf(last)).toMatchObject({ state: 'WORKING' });
        expect(operationOf(last).outcome).toBeUndefined();
        expect(textOf(last)).toMatch(why);
        expect(textOf(last)).toMatch(/nothing from it was taken as the outcome/);
      }
      await plainStillAnswers();
    },
    SLOW,
  );

  it(
    'a result that is not a CallToolResult is never accepted: refetched with back-off, then UNKNOWN with why',
    async () => {
      const bad = operationOf(await hostCall(bridge.client, 'evil__evil', { mode: 'bad-result' }));
      const status = await hostCall(bridge.client, 'terminus_status', { operation: bad.id });
      expect(textOf(status)).toMatch(/tasks\/result answer is not a CallToolResult \(content\.0/);
      // 8 refetches with back-off (the executor's maxFetchAttempts): a few minutes at most.
      const ended = await waitResult(bridge.client, bad.id, 200);
      expect(operationOf(ended).state).toBe('UNKNOWN');
      expect(textOf(ended)).toMatch(/its result could not be verified .*not a CallToolResult/);
      await plainStillAnswers();
    },
    4 * SLOW,
  );

  it(
    'huge values are cut or clamped',
    async () => {
      const huge = await hostCall(bridge.client, 'evil__evil', { mode: 'huge' });
      expect(JSON.stringify(huge).length).toBeLessThan(20_000);
      const done =
        (huge.structuredContent as { operation?: unknown } | undefined)?.operation === undefined
          ? huge
          : await waitResult(bridge.client, operationOf(huge).id);
      expect(textOf(done)).toBe('finished (huge)');
      await plainStillAnswers();
    },
    SLOW,
  );
});
