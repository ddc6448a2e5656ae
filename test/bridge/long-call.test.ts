/**
 * The main scenario: a host with a 5 s request timeout calls a 20 s tool through
 * `terminus bridge` (stdio) in front of `terminus serve` (HTTP, Tasks extension wire). The call
 * returns an operation handle within the inline wait, `terminus_wait` returns the tool's result,
 * and the upstream ran exactly one task; a repeated identical call while it runs attaches (never
 * twice, C5); and an unknown or another caller's id gets one clear tool error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, startServe, tempDir, type Served } from '../cli/helpers.js';
import {
  connectBridge,
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
      const first = await hostCall(bridge.client, 'slow_compute', { seconds: 20, label });
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

      // After the receipt the same call is a new operation (the never-twice window closed).
      const later = await hostCall(bridge.client, 'slow_compute', { seconds: 0, label: 'after' });
      expect(textOf(later)).toBe('after: done after 0 s');
    },
    SLOW,
  );

  it('an unknown id and a malformed one get the same clear tool error', async () => {
    for (const operation of ['op_00000000-0000-4000-8000-000000000000', 'nonsense']) {
      const answer = await hostCall(bridge.client, 'terminus_wait', { operation });
      expect(answer.isError).toBe(true);
      expect(textOf(answer)).toMatch(/unknown or not yours.*terminus_operations/s);
    }
  });
});
