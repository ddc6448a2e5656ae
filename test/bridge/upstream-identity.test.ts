/**
 * What a bridge restart keeps of its upstreams: the HTTP session an operation was created in (a
 * 2025-11-25 server that binds tasks to their session, the SDK 1.32 task server) is continued, so
 * the operation ends with its result, not UNKNOWN; and the credential toward the upstream is part
 * of each operation (a salted fingerprint, C4): a bridge started later with another one refuses to
 * ask about it (nothing sent, the operation unchanged) instead of turning it UNKNOWN on the
 * upstream's "not found" (S8).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBridge, type Bridge } from '../../src/bridge/index.js';
import type { ToolOperation } from '../../src/executor/operation.js';
import { openSqliteLedger } from '../../src/sqlite.js';
import { killAll, ROOT, start, startServe, tempDir, tsNode, type Served } from '../cli/helpers.js';
import { connectBridge, hostCall, ledgerIn, operationOf, textOf, waitResult } from './helpers.js';

const SLOW = 180_000;
const FIXTURE = join(ROOT, 'test/fixtures/sdk132-tasks-server.ts');
const dir = tempDir('terminus-bridge-upstream-');
const fixtureLog = join(dir.path, 'fixture.log');
let sessionUrl: string;
let served: Served;
const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef01';

beforeAll(async () => {
  const fixture = start(tsNode(FIXTURE), { cwd: dir.path, env: { FIXTURE_HTTP: '1', FIXTURE_LOG: fixtureLog } });
  sessionUrl = (await fixture.waitFor(/http:\/\/127\.0\.0\.1:\d+\/mcp/, 'stdout')).trim();
  const tokens = join(dir.path, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ [ALICE]: 'alice', [BOB]: 'bob' }));
  served = await startServe(dir.path, ['--fixtures', 'conformance', '--auth-tokens', tokens]);
}, SLOW);
afterAll(async () => {
  await served?.stop();
  killAll();
  dir.remove();
});

const created = (): number =>
  readFileSync(fixtureLog, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"event":"created"')).length;

async function ledgerRow(path: string, id: string): Promise<ToolOperation> {
  const ledger = openSqliteLedger({ path });
  try {
    return (await ledger.load(id))!;
  } finally {
    await ledger.close();
  }
}

describe('terminus bridge restarted in front of its upstreams', () => {
  it(
    'continues the HTTP session an operation was created in: the result, one upstream task',
    async () => {
      const ledger = ledgerIn(dir.path, 'session');
      const upstreams = [`sdk=${sessionUrl}`];
      const first = await connectBridge({ ledger, upstreams, inlineWaitSeconds: 1 });
      const before = created();
      const handle = operationOf(await hostCall(first.client, 'sdk_slow', { seconds: 6 }));
      expect(handle.state).not.toBe('UNKNOWN');
      await first.close();
      // The session id is kept with the operation (a secret: in the ledger only).
      expect((await ledgerRow(ledger, handle.id)).session).toMatchObject({ id: expect.any(String) });

      const second = await connectBridge({ ledger, upstreams, inlineWaitSeconds: 2 });
      try {
        const result = await waitResult(second.client, handle.id);
        expect(textOf(result)).toBe('slow done');
        expect((await ledgerRow(ledger, handle.id)).state).toBe('ACCEPTED');
        expect(created() - before).toBe(1);
      } finally {
        await second.close();
      }
    },
    SLOW,
  );

  it(
    'refuses an operation submitted under another upstream credential: nothing sent, the operation unchanged',
    async () => {
      const path = ledgerIn(dir.path, 'identity');
      const ledger = openSqliteLedger({ path });
      const opened: { bridge: Bridge; client: Client }[] = [];
      const host = async (token: string) => {
        const bridge = await createBridge({
          ledger,
          upstreams: { reports: { url: served.url, headers: { Authorization: `Bearer ${token}` } } },
          inlineWaitMs: 1_000,
        });
        const http = await bridge.serveHttp({ port: 0 });
        const client = new Client({ name: 'identity-host', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
        opened.push({ bridge, client });
        return client;
      };
      try {
        const alice = await host(ALICE);
        const call = (client: Client, name: string, args: Record<string, unknown>) =>
          client.callTool({ name, arguments: args });
        const handle = operationOf(await call(alice, 'slow_compute', { seconds: 4, label: 'identity' }));
        // The fingerprint is salted per operation: never the token itself.
        const identity = (await ledger.load(handle.id))!.identity;
        expect(identity).toMatch(/^[0-9a-f]{64}$/);
        expect(identity).not.toContain(ALICE);
        const { bridge, client } = opened.shift()!;
        await client.close();
        await bridge.close();

        const bob = await host(BOB);
        const refused = await call(bob, 'terminus_wait', { operation: handle.id });
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain('another credential');
        expect(textOf(refused)).toContain('nothing was sent');
        // The same call again does not start a second operation either (C5).
        const again = await call(bob, 'slow_compute', { seconds: 4, label: 'identity' });
        expect(textOf(again)).toContain(`Operation ${handle.id}`);
        expect((await ledger.load(handle.id))!.state).not.toBe('UNKNOWN');
        const { bridge: bobBridge, client: bobClient } = opened.shift()!;
        await bobClient.close();
        await bobBridge.close();

        const back = await host(ALICE);
        const result = await waitResult(back, handle.id);
        expect(textOf(result)).toBe('identity: done after 4 s');
      } finally {
        for (const { bridge, client } of opened) {
          await client.close().catch(() => undefined);
          await bridge.close();
        }
        await ledger.close();
      }
    },
    SLOW,
  );
});
