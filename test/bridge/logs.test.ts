/**
 * `terminus_logs {operation, after?}` (issue 18) through a real SDK 2.4 client in front of `terminus
 * bridge` (stdio): a model reads the failures of a `run_tests` operation while it still runs, then
 * only the newer lines with the cursor it was given, and the end of the log after the result; the
 * "still running" answer names `terminus_logs` when the upstream keeps logs, and not when it does
 * not (SDK 1.32 upstream: a clear tool error instead). Unknown ids answer like every model tool.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, ROOT, startServe, stdioCommand, tempDir, type Served } from '../cli/helpers.js';
import { connectBridge, hostCall, ledgerIn, operationOf, textOf, waitResult, type BridgeClient } from './helpers.js';

const SLOW = 180_000;
const SDK132 = join(ROOT, 'test/fixtures/sdk132-tasks-server.ts');
const dir = tempDir('terminus-bridge-logs-');
let served: Served;
let bridge: BridgeClient;

interface LogsFacts {
  readonly lines: { seq: number; epoch: number; text: string; stream: string }[];
  readonly next: number;
  readonly dropped: number;
  readonly status: string;
  readonly done: boolean;
}
const factsOf = (result: { structuredContent?: unknown }): LogsFacts => result.structuredContent as LogsFacts;

beforeAll(async () => {
  served = await startServe(dir.path);
  bridge = await connectBridge({
    ledger: ledgerIn(dir.path, 'logs'),
    upstreams: [`demo=${served.url}`, `sdk=stdio:${stdioCommand(SDK132)}`],
  });
}, SLOW);
afterAll(async () => {
  await bridge?.close();
  await served?.stop();
  killAll();
  dir.remove();
});

describe('terminus bridge: terminus_logs', () => {
  it('is listed for the model, with `after` as the cursor', async () => {
    const { tools } = await bridge.client.listTools();
    const logs = tools.find((t) => t.name === 'terminus_logs');
    expect(logs?.inputSchema).toMatchObject({ required: ['operation'], properties: { after: { type: 'integer' } } });
  });

  it(
    'reads the failures while the suite runs, then only newer lines by cursor, then the complete log',
    async () => {
      // 20 tests of 300 ms: still running when the 2 s inline wait ends.
      const first = await hostCall(bridge.client, 'demo__run_tests', { count: 20, failEvery: 4, pauseMs: 300 });
      const op = operationOf(first);
      expect(op.state).toBe('WORKING');
      expect(textOf(first)).toContain(`terminus_logs {"operation":"${op.id}"} reads what it has logged so far`);

      const early = await hostCall(bridge.client, 'terminus_logs', { operation: op.id });
      expect(early.isError).toBeFalsy();
      const a = factsOf(early);
      expect(a.status).toBe('working');
      expect(a.done).toBe(false);
      expect(a.lines[0]).toMatchObject({ seq: 1, text: 'running 20 tests' });
      expect(a.lines.map((l) => l.seq)).toEqual(Array.from({ length: a.lines.length }, (_, i) => i + 1));
      expect(a.next).toBe(a.lines.length);
      expect(textOf(early)).toContain(`call terminus_logs {"operation":"${op.id}","after":${a.next}} later`);
      if (a.lines.length >= 5) expect(textOf(early)).toContain('5: FAIL test_004: expected 4, got 5');

      const result = await waitResult(bridge.client, op.id);
      expect(textOf(result)).toMatch(/^20 tests: 15 passed, 5 failed/);

      const rest = await hostCall(bridge.client, 'terminus_logs', { operation: op.id, after: a.next });
      const b = factsOf(rest);
      expect(b.lines[0]!.seq).toBe(a.next + 1);
      expect([...a.lines, ...b.lines].map((l) => l.seq)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
      expect(b).toMatchObject({ next: 22, done: true, status: 'completed', dropped: 0 });
      expect(b.lines.at(-1)).toMatchObject({ stream: 'output', text: '20 tests: 15 passed, 5 failed' });
      expect(textOf(rest)).toContain('The log is complete (the operation completed).');
      expect(textOf(rest)).toContain('22: [output] 20 tests: 15 passed, 5 failed');

      const after = await hostCall(bridge.client, 'terminus_logs', { operation: op.id, after: 22 });
      expect(factsOf(after)).toMatchObject({ lines: [], next: 22, done: true });
    },
    SLOW,
  );

  it('an upstream without task logs: not named while running, and a clear tool error', async () => {
    const first = await hostCall(bridge.client, 'sdk__sdk_slow', { seconds: 30 });
    const op = operationOf(first);
    const logs = await hostCall(bridge.client, 'terminus_logs', { operation: op.id });
    expect(logs.isError).toBe(true);
    expect(textOf(logs)).toMatch(/its upstream keeps no task logs; terminus_status shows its progress/);
    const again = await hostCall(bridge.client, 'terminus_wait', { operation: op.id, seconds: 0 });
    expect(textOf(again)).toContain('still running');
    expect(textOf(again)).not.toContain('terminus_logs');
    await hostCall(bridge.client, 'terminus_cancel', { operation: op.id });
  });

  it('an unknown id and a bad cursor get clear tool errors', async () => {
    const unknown = await hostCall(bridge.client, 'terminus_logs', {
      operation: 'op_00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/unknown or not yours.*terminus_operations/s);
    const bad = await hostCall(bridge.client, 'terminus_logs', { operation: 'op_x', after: -1 });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/`after` must be a whole number/);
  });
});
