/**
 * Upstreams no one here wrote, all behind one bridge (so names are prefixed by upstream):
 * server-everything's task tool over stdio (2025-11-25 wire), the SDK 1.32 task server
 * (test/fixtures/sdk132-tasks-server.ts), and a plain SDK 2.4 server with only synchronous tools,
 * whose tools pass through unchanged.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING, killAll, ROOT, stdioCommand, tempDir } from '../cli/helpers.js';
import { connectBridge, hostCall, ledgerIn, operationOf, textOf, waitResult, type BridgeClient } from './helpers.js';
import { PLAIN_TOOLS } from './fixtures/plain-tools.js';

const SLOW = 180_000;
const SDK132 = join(ROOT, 'test/fixtures/sdk132-tasks-server.ts');
const PLAIN = join(ROOT, 'test/bridge/fixtures/plain-server.ts');
const dir = tempDir('terminus-bridge-foreign-');
const fixtureLog = join(dir.path, 'sdk132.log');
let bridge: BridgeClient;

beforeAll(async () => {
  bridge = await connectBridge({
    ledger: ledgerIn(dir.path, 'foreign'),
    upstreams: [
      `everything=stdio:'${process.execPath}' '${EVERYTHING}' stdio`,
      `sdk=stdio:${stdioCommand(SDK132)}`,
      `plain=stdio:${stdioCommand(PLAIN)}`,
    ],
    env: { FIXTURE_LOG: fixtureLog },
  });
}, SLOW);
afterAll(async () => {
  await bridge?.close();
  killAll();
  dir.remove();
});

const created = (): number =>
  readFileSync(fixtureLog, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"created"')).length;

describe('terminus bridge in front of servers no one here wrote', () => {
  it('lists every upstream tool under <upstream>__<tool>', async () => {
    const names = (await bridge.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'everything__simulate-research-query',
        'everything__echo',
        'sdk__sdk_complete',
        'plain__add',
      ]),
    );
    expect(names.filter((n) => n.startsWith('terminus_')).sort()).toEqual([
      'terminus_cancel',
      'terminus_logs',
      'terminus_operations',
      'terminus_respond',
      'terminus_status',
      'terminus_wait',
    ]);
  });

  it(
    "server-everything's task tool over stdio (2025-11-25): a handle, then the report",
    async () => {
      const first = await hostCall(bridge.client, 'everything__simulate-research-query', { topic: 'tides' });
      const result =
        (first.structuredContent as { operation?: unknown } | undefined)?.operation === undefined
          ? first
          : await waitResult(bridge.client, operationOf(first).id);
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain('# Research Report: tides');
      // A synchronous tool of the same upstream passes through.
      const echo = await hostCall(bridge.client, 'everything__echo', { message: 'hi' });
      expect(textOf(echo)).toBe('Echo: hi');
    },
    SLOW,
  );

  it(
    'the SDK 1.32 task server: a handle within the inline wait, the result, one task created',
    async () => {
      const first = await hostCall(bridge.client, 'sdk__sdk_complete', { ms: 4000, text: 'from 1.32' });
      const op = operationOf(first);
      const result = await waitResult(bridge.client, op.id);
      expect(textOf(result)).toContain('from 1.32');
      expect(created()).toBe(1);
    },
    SLOW,
  );

  it('a plain SDK 2.4 server: its tool listed unchanged and its answer passed through', async () => {
    const { tools } = await bridge.client.listTools();
    const add = tools.find((t) => t.name === 'plain__add')!;
    expect({ ...add, name: 'add' }).toEqual(PLAIN_TOOLS[0]);
    const answer = await hostCall(bridge.client, 'plain__add', { a: 2, b: 3 });
    expect(answer).toEqual({ content: [{ type: 'text', text: '2 + 3 = 5' }], structuredContent: { sum: 5 } });

    // The same tool called directly: the bridge answers exactly what the server answers.
    const direct = new Client({ name: 'direct', version: '1.0.0' });
    await direct.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', PLAIN],
        cwd: ROOT,
        stderr: 'ignore',
      }),
    );
    try {
      expect(await direct.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).toEqual(answer);
    } finally {
      await direct.close();
    }
  });
});
