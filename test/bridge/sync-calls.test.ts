/**
 * Synchronous upstream tools through the bridge (no task: a plain `tools/call`), against the real
 * server-everything and a plain SDK 2.4 server, each behind a recorder that counts the `tools/call`
 * requests reaching it. A host with a 5 s timeout and a bridge with a 2 s inline wait:
 * - a 9 s call returns an operation handle within the inline wait; the host's retry with the same
 *   arguments attaches to the call in flight, and the one upstream call's result answers it (C5);
 *   once it ended, the same call is a new operation;
 * - a tool with an `outputSchema` (listed unchanged) gets a handle an SDK host accepts, then its own
 *   result; the upstream's JSON-RPC refusal reaches the host as that JSON-RPC error;
 * - the bridge killed during the call: the restarted bridge never sends it again (the plain call's
 *   answer is lost, it may have run: UNKNOWN, C12), and the host's retry is told so.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING, killAll, ROOT, stdioCommand, tempDir, tsNode } from '../cli/helpers.js';
import { connectBridge, hostCall, ledgerIn, operationOf, textOf, waitResult, type BridgeClient } from './helpers.js';

const SLOW = 180_000;
const RECORDER = join(ROOT, 'test/bridge/fixtures/recording-stdio.ts');
const PLAIN = join(ROOT, 'test/bridge/fixtures/plain-server.ts');
const dir = tempDir('terminus-bridge-sync-');
const everythingLog = join(dir.path, 'everything.log');
const plainLog = join(dir.path, 'plain.log');
const upstreams = [
  `everything=stdio:${stdioCommand(RECORDER, everythingLog, '--', process.execPath, EVERYTHING, 'stdio')}`,
  `plain=stdio:${stdioCommand(RECORDER, plainLog, '--', process.execPath, ...tsNode(PLAIN))}`,
];
let bridge: BridgeClient;

beforeAll(async () => {
  bridge = await connectBridge({ ledger: ledgerIn(dir.path, 'sync'), upstreams });
  await bridge.client.listTools();
}, SLOW);
afterAll(async () => {
  await bridge?.close();
  killAll();
  dir.remove();
});

/** The `tools/call` requests of `tool` with exactly these arguments that reached the upstream. */
function upstreamCalls(log: string, tool: string, args: Record<string, unknown>): number {
  if (!existsSync(log)) return 0;
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { name: string; arguments: unknown })
    .filter((call) => call.name === tool && JSON.stringify(call.arguments) === JSON.stringify(args)).length;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const idIn = (text: string): string => /operation (op_[^\s(),.]+)/.exec(text)![1]!;

describe('synchronous upstream tools through the bridge', () => {
  it(
    "server-everything's 9 s tool: a handle, the host's retry attaches, one upstream call, one result",
    async () => {
      const args = { duration: 9, steps: 3 };
      const first = await hostCall(bridge.client, 'everything__trigger-long-running-operation', args).catch(
        (error: unknown) => error,
      );
      const retry = await hostCall(bridge.client, 'everything__trigger-long-running-operation', args).catch(
        (error: unknown) => error,
      );
      // Both requests went in while the first ran: the upstream saw one call.
      await sleep(9_000);
      expect(upstreamCalls(everythingLog, 'trigger-long-running-operation', args)).toBe(1);

      const op = operationOf(first as never);
      expect(op).toMatchObject({ state: 'SUBMITTING', plain: true });
      expect(textOf(first as never)).toMatch(/synchronous call/);
      expect(operationOf(retry as never)).toMatchObject({ id: op.id, attached: true });
      const cancel = await hostCall(bridge.client, 'terminus_cancel', { operation: op.id });
      expect(cancel.structuredContent).toMatchObject({ cancel: expect.stringMatching(/not_sent|already_ended/) });

      const result = await waitResult(bridge.client, op.id);
      expect(textOf(result)).toContain('Long running operation completed. Duration: 9 seconds');
      expect(upstreamCalls(everythingLog, 'trigger-long-running-operation', args)).toBe(1);

      // The window is the call's life: once it ended, the same call is a new one.
      const short = { duration: 0.2, steps: 1 };
      for (let i = 0; i < 2; i++) {
        const done = await hostCall(bridge.client, 'everything__trigger-long-running-operation', short);
        expect(textOf(done)).toContain('Long running operation completed');
      }
      expect(upstreamCalls(everythingLog, 'trigger-long-running-operation', short)).toBe(2);
    },
    SLOW,
  );

  it(
    'a tool with an outputSchema: a handle an SDK host accepts, then its own result; a refusal stays -32602',
    async () => {
      const args = { a: 1, b: 2, ms: 8_000 };
      const first = await hostCall(bridge.client, 'plain__slow_sum', args);
      expect(first.structuredContent).toBeUndefined();
      expect(first.isError).toBe(true);
      expect(textOf(first)).toMatch(/still running as operation op_/);
      const id = idIn(textOf(first));
      const retry = await hostCall(bridge.client, 'plain__slow_sum', args);
      expect(textOf(retry)).toMatch(/attached to the operation already running/);
      expect(idIn(textOf(retry))).toBe(id);

      const result = await waitResult(bridge.client, id);
      expect(result).toEqual({ content: [{ type: 'text', text: '1 + 2 = 3' }], structuredContent: { sum: 3 } });
      expect(upstreamCalls(plainLog, 'slow_sum', args)).toBe(1);

      await expect(hostCall(bridge.client, 'plain__slow_sum', { a: -1, b: 0, ms: 0 })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('a must not be negative'),
      });
      // A fast call is answered as the upstream answered it.
      expect(await hostCall(bridge.client, 'plain__add', { a: 2, b: 2 })).toEqual({
        content: [{ type: 'text', text: '2 + 2 = 4' }],
        structuredContent: { sum: 4 },
      });
    },
    SLOW,
  );

  it(
    'the bridge killed during a synchronous call: the restarted bridge never sends it again, the retry hears UNKNOWN',
    async () => {
      const ledger = ledgerIn(dir.path, 'restart');
      const args = { duration: 7, steps: 1 };
      const first = await connectBridge({ ledger, upstreams });
      try {
        await first.client.listTools();
        const op = operationOf(await hostCall(first.client, 'everything__trigger-long-running-operation', args));
        expect(op.plain).toBe(true);
        process.kill(first.pid, 'SIGKILL');
      } finally {
        await first.close().catch(() => undefined);
      }
      const second = await connectBridge({ ledger, upstreams });
      try {
        await second.client.listTools();
        const again = await hostCall(second.client, 'everything__trigger-long-running-operation', args);
        expect(operationOf(again)).toMatchObject({ state: 'UNKNOWN', attached: true });
        expect(again.isError).toBe(true);
        expect(again.structuredContent).toMatchObject({ next: 'operator' });
        expect(textOf(again)).toMatch(/may have run/);
        await sleep(1_000);
        expect(upstreamCalls(everythingLog, 'trigger-long-running-operation', args)).toBe(1);
      } finally {
        await second.close();
      }
    },
    SLOW,
  );
});
