/**
 * The main scenario: a host with a 5 s request timeout calls a 20 s tool through
 * `terminus bridge` (stdio) in front of `terminus serve` (HTTP, Tasks extension wire). The call
 * returns an operation handle within the inline wait, `terminus_wait` returns the tool's result,
 * and the upstream ran exactly one task; a repeated identical call while it runs attaches (never
 * twice, C5); and an unknown or another caller's id gets one clear tool error.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, startServe, tempDir, type Served } from '../cli/helpers.js';
import {
  connectBridge,
  HOST_TIMEOUT_MS,
  hostCall,
  ledgerFacts,
  ledgerIn,
  operationOf,
  textOf,
  upstreamTasks,
  waitResult,
  type BridgeClient,
} from './helpers.js';

const SLOW = 180_000;
const dir = tempDir('terminus-bridge-');
let served: Served;
let bridge: BridgeClient;
const ledger = ledgerIn(dir.path, 'long');

beforeAll(async () => {
  served = await startServe(dir.path, ['--fixtures', 'conformance']);
  bridge = await connectBridge({ ledger, upstreams: [`reports=${served.url}`] });
}, SLOW);
afterAll(async () => {
  await bridge?.close();
  await served?.stop();
  killAll();
  dir.remove();
});

describe('terminus bridge: a 20 s tool behind a host with a 5 s timeout', () => {
  it('lists the upstream tools as ordinary tools, plus the terminus_* tools', async () => {
    const { tools } = await bridge.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['slow_compute', 'greet', 'terminus_wait', 'terminus_status']));
    expect(names).toEqual(expect.arrayContaining(['terminus_cancel', 'terminus_operations', 'terminus_respond']));
    const slow = tools.find((t) => t.name === 'slow_compute')!;
    expect(slow.description).toMatch(/operation id/);
    expect(slow).not.toHaveProperty('execution');
  });

  it(
    'returns a handle within the budget; terminus_wait returns the result; one upstream task',
    async () => {
      const label = 'twenty-seconds';
      const updated: string[] = [];
      const logged: string[] = [];
      bridge.client.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri));
      bridge.client.setNotificationHandler('notifications/message', (n) => void logged.push(String(n.params.data)));
      const progress: { progress: number; total?: number }[] = [];
      const first = await bridge.client.callTool(
        { name: 'slow_compute', arguments: { seconds: 20, label } },
        { timeout: HOST_TIMEOUT_MS, onprogress: (p) => void progress.push(p) },
      );
      // The host sent a progressToken: the upstream's progress reached it.
      expect(progress[0]).toMatchObject({ progress: 0, total: 20 });
      expect(first.isError).toBeFalsy();
      const op = operationOf(first);
      expect(op.id).toMatch(/^op_/);
      expect(textOf(first)).toContain('terminus_wait');

      // Never twice: the host retries the same call while it runs; same operation, no second task.
      const again = await hostCall(bridge.client, 'slow_compute', { label, seconds: 20 });
      expect(operationOf(again)).toMatchObject({ id: op.id, attached: true });

      const listed = await hostCall(bridge.client, 'terminus_operations');
      expect(JSON.stringify(listed.structuredContent)).toContain(op.id);

      const result = await waitResult(bridge.client, op.id);
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toBe(`${label}: done after 20 s`);
      expect(upstreamTasks(served.db, label)).toBe(1);
      expect(ledgerFacts(ledger, label)).toEqual({ operations: 1, receipts: 1 });

      // Hosts that listen are told: the operation's resource changed, and a log message says how it ended.
      for (let i = 0; i < 50 && !updated.includes(`terminus://operations/${op.id}`); i++) await sleep(100);
      expect(updated).toContain(`terminus://operations/${op.id}`);
      expect(logged.some((m) => m.includes(op.id) && m.includes('completed'))).toBe(true);
      const resource = await bridge.client.readResource({ uri: `terminus://operations/${op.id}` });
      expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({
        operation: { id: op.id, outcome: 'completed' },
      });

      // After the receipt the same call is a new operation (the never-twice window closed).
      const later = await hostCall(bridge.client, 'slow_compute', { seconds: 0, label: 'after' });
      expect(textOf(later)).toBe('after: done after 0 s');
    },
    SLOW,
  );

  it('a tool the upstream answers synchronously returns its own answer, as a receipt (C12)', async () => {
    for (let i = 0; i < 2; i++) {
      const greet = await hostCall(bridge.client, 'greet', { name: 'Ada' });
      expect(greet).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada!' }] });
      expect(greet.isError).toBeFalsy();
    }
  });

  it('an unknown id and a malformed one get the same clear tool error', async () => {
    for (const operation of ['op_00000000-0000-4000-8000-000000000000', 'nonsense']) {
      const answer = await hostCall(bridge.client, 'terminus_wait', { operation });
      expect(answer.isError).toBe(true);
      expect(textOf(answer)).toMatch(/unknown or not yours.*terminus_operations/s);
    }
  });

  it('arguments nested past what a digest takes are -32602, not a stack overflow; the bridge answers on', async () => {
    const levels = 2_000; // the SDK client still serialises this; the digest stops at 1,000
    const deep = JSON.parse(`{"label":"deep","nested":${'['.repeat(levels)}${']'.repeat(levels)}}`) as Record<
      string,
      unknown
    >;
    // Before: -32603 "Maximum call stack size exceeded" from the key sort of the digest.
    await expect(hostCall(bridge.client, 'slow_compute', deep)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('arguments nest deeper than 1000 levels'),
    });
    expect(upstreamTasks(served.db, 'deep')).toBe(0);
    const greet = await hostCall(bridge.client, 'greet', { name: 'Ada' });
    expect(greet).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada!' }] });
  });
});
