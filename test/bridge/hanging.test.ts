/**
 * Upstreams that accept connections and never answer (issue 30, the bridge): one that never
 * answered anything, and one that answered once and then stalls (an SDK 2.4 server in this
 * process). The host's `tools/list` answers within its timeout from what the bridge has: the other
 * upstreams, the stalled one's last listing (after a 1 s grace, not the 5 s deadline), and names what
 * is missing once its deadline passed (in `_meta`, in
 * `terminus_operations`' description for the model, on stderr). A call of the stalled upstream's
 * tool is refused at once with why, nothing sent; the others answer throughout; once the upstream
 * answers again, so does the bridge.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, ROOT, stdioCommand, tempDir, tsNode } from '../cli/helpers.js';
import { connectBridge, hostCall, ledgerIn, operationOf, textOf, type BridgeClient } from './helpers.js';
import { startSwitchableServer, type SwitchableServer } from './fixtures/switchable-server.js';

const SLOW = 120_000;
/** A host's patience for a tool list here: well below the 30 s the bridge's upstream requests may take. */
const LIST_TIMEOUT_MS = 20_000;
const PLAIN = join(ROOT, 'test/bridge/fixtures/plain-server.ts');
const RECORDER = join(ROOT, 'test/bridge/fixtures/recording-stdio.ts');
const SDK132 = join(ROOT, 'test/fixtures/sdk132-tasks-server.ts');
const META = 'mcp-terminus.dev/missingUpstreams';
const dir = tempDir('terminus-bridge-hang-');
let silent: Server;
let flaky: SwitchableServer;
let bridge: BridgeClient;
let stderr = '';
let listChanged = 0;

/** Accepts every connection and request, answers none. */
async function startSilent(): Promise<{ server: Server; url: string }> {
  const server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

beforeAll(async () => {
  const dead = await startSilent();
  silent = dead.server;
  flaky = await startSwitchableServer();
  bridge = await connectBridge({
    ledger: ledgerIn(dir.path, 'hang'),
    upstreams: [`good=stdio:${stdioCommand(PLAIN)}`, `flaky=${flaky.url}`, `dead=${dead.url}`],
    onStderr: (text) => (stderr += text),
  });
  bridge.client.setNotificationHandler('notifications/tools/list_changed', () => void (listChanged += 1));
}, SLOW);
afterAll(async () => {
  await bridge?.close();
  killAll();
  silent?.closeAllConnections();
  silent?.close();
  await flaky?.close();
  dir.remove();
});

const missingIn = (result: { _meta?: Record<string, unknown> }): unknown => result._meta?.[META];
const descriptionOf = (tools: { name: string; description?: string }[], name: string): string =>
  tools.find((t) => t.name === name)?.description ?? '';

describe('terminus bridge with upstreams that never answer', () => {
  it(
    'tools/list answers in time from the others and names the upstream that does not answer',
    async () => {
      const listed = await bridge.client.listTools({}, { timeout: LIST_TIMEOUT_MS });
      const names = listed.tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['good__add', 'flaky__echo', 'terminus_wait']));
      expect(names.filter((n) => n.startsWith('dead__'))).toEqual([]);
      expect(missingIn(listed)).toEqual([
        { upstream: 'dead', reason: expect.stringMatching(/no answer to tools\/list within 5 s/), cached: false },
      ]);
      expect(descriptionOf(listed.tools, 'terminus_operations')).toMatch(/missing from this list: upstream dead/);
      expect(stderr).toMatch(/upstream missing from the tool list .*"upstream":"dead"/);
      // The same again: the listing of `dead` still in flight, the answer does not wait for it again.
      const again = await bridge.client.listTools({}, { timeout: 4_000 });
      expect(missingIn(again)).toEqual(missingIn(listed));
    },
    SLOW,
  );

  it(
    'an upstream that stalls: listed from its last listing, its tool refused with why (nothing sent), the others answer',
    async () => {
      // A listing it answered, then it stalls.
      expect((await bridge.client.listTools({}, { timeout: LIST_TIMEOUT_MS })).tools.map((t) => t.name)).toContain(
        'flaky__echo',
      );
      flaky.hang(true);
      try {
        // Its last listing answers at once (within the 1 s grace, not the 5 s deadline) ...
        const first = await bridge.client.listTools({}, { timeout: 4_000 });
        expect(first.tools.map((t) => t.name)).toContain('flaky__echo');
        // ... and once the deadline passed, it is named as missing.
        let listed = first;
        for (let i = 0; i < 100 && !JSON.stringify(missingIn(listed) ?? []).includes('flaky'); i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          listed = await bridge.client.listTools({}, { timeout: 4_000 });
        }
        expect(listed.tools.map((t) => t.name)).toContain('flaky__echo');
        expect(missingIn(listed)).toEqual(
          expect.arrayContaining([
            { upstream: 'flaky', reason: expect.stringMatching(/no answer to tools\/list/), cached: true },
          ]),
        );
        expect(descriptionOf(listed.tools, 'terminus_operations')).toMatch(
          /flaky \(no answer .*its tools are listed as it last listed them\)/,
        );
        const before = flaky.calls('echo');
        const [refused, fine] = await Promise.all([
          hostCall(bridge.client, 'flaky__echo', { text: 'hello' }),
          hostCall(bridge.client, 'good__add', { a: 1, b: 2 }),
        ]);
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toMatch(/upstream flaky does not answer .*the call was not sent, nothing ran/);
        expect(flaky.calls('echo')).toBe(before);
        expect(fine.structuredContent).toEqual({ sum: 3 });
      } finally {
        flaky.hang(false);
      }
      // Answering again (its held listing answered): listed without a note once that answer is in, and its tool runs.
      let listed = await bridge.client.listTools({}, { timeout: LIST_TIMEOUT_MS });
      for (let i = 0; i < 20 && JSON.stringify(missingIn(listed)).includes('flaky'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        listed = await bridge.client.listTools({}, { timeout: LIST_TIMEOUT_MS });
      }
      expect(missingIn(listed)).toEqual([expect.objectContaining({ upstream: 'dead' })]);
      // A host that listed while it was missing is told to list again.
      for (let i = 0; i < 50 && listChanged === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(listChanged).toBeGreaterThan(0);
      const echo = await hostCall(bridge.client, 'flaky__echo', { text: 'back' });
      expect(textOf(echo)).toBe('back');
      expect(stderr).toMatch(/upstream answers its tool listing again .*"upstream":"flaky"/);
    },
    SLOW,
  );

  it(
    'restarted while the upstream of an operation hangs: the bridge starts at once, terminus_wait answers within the deadline',
    async () => {
      const ledger = ledgerIn(dir.path, 'restart');
      const hangFile = join(dir.path, 'hang');
      const upstream = [
        `sdk=stdio:${stdioCommand(RECORDER, join(dir.path, 'sdk.log'), '--', process.execPath, ...tsNode(SDK132))}`,
      ];
      const env = { HANG_FILE: hangFile };
      const first = await connectBridge({ ledger, upstreams: upstream, env });
      let id: string;
      try {
        await first.client.listTools({}, { timeout: LIST_TIMEOUT_MS });
        const op = operationOf(await hostCall(first.client, 'sdk_slow', { seconds: 120 }));
        expect(op.state).toBe('WORKING');
        id = op.id;
        process.kill(first.pid, 'SIGKILL');
      } finally {
        await first.close().catch(() => undefined);
      }
      writeFileSync(hangFile, '');
      // A host gives a server 15 s to start here; the upstream's requests would take 30 s to time out.
      const second = await connectBridge({ ledger, upstreams: upstream, env, connectTimeoutMs: 15_000 });
      try {
        const waited = await hostCall(second.client, 'terminus_wait', { operation: id });
        expect(waited.isError).toBe(true);
        expect(textOf(waited)).toMatch(
          /its upstream sdk cannot be reached now \(no answer within \d+ s\).*call terminus_wait again later/s,
        );
        const listed = await second.client.listTools({}, { timeout: LIST_TIMEOUT_MS });
        expect(missingIn(listed)).toEqual([expect.objectContaining({ upstream: 'sdk', cached: false })]);
      } finally {
        await second.close();
      }
    },
    SLOW,
  );
});
