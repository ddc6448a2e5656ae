/**
 * A stdio upstream that dies under a running operation (kill -9 of the SDK 1.32 task server): the
 * bridge passes the executor the connection's end, so the executor reconnects (a new server process)
 * and the operation leaves WORKING (the new process does not know the task: 404, then UNKNOWN with
 * its evidence) instead of waiting on a dead pipe; the upstream's plain tools are reachable again.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, ROOT, stdioCommand, tempDir } from '../cli/helpers.js';
import { connectBridge, hostCall, ledgerIn, operationOf, type BridgeClient } from './helpers.js';

const SLOW = 180_000;
const SDK132 = join(ROOT, 'test/fixtures/sdk132-tasks-server.ts');
const dir = tempDir('terminus-bridge-death-');
let bridge: BridgeClient;

beforeAll(async () => {
  bridge = await connectBridge({
    ledger: ledgerIn(dir.path, 'death'),
    upstreams: [`sdk=stdio:${stdioCommand(SDK132)}`],
  });
  // The upstream starts with the first listing, not inside the first call's 5 s.
  await bridge.client.listTools();
}, SLOW);
afterAll(async () => {
  await bridge?.close();
  killAll();
  dir.remove();
});

/** The bridge's upstream processes (its other child is tsx's esbuild service). */
const upstreamsOf = (pid: number): number[] =>
  execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes('sdk132-tasks-server'))
    .map((l) => Number(l.trim().split(/\s+/)[0]));

describe('terminus bridge when a stdio upstream dies', () => {
  it(
    'the operation is reconnected and leaves WORKING instead of waiting on a dead pipe',
    async () => {
      const op = operationOf(await hostCall(bridge.client, 'sdk_slow', { seconds: 120 }));
      expect(op.state).toBe('WORKING');
      const upstreams = upstreamsOf(bridge.pid);
      expect(upstreams).toHaveLength(1);
      process.kill(upstreams[0]!, 'SIGKILL');

      let state = op.state;
      for (let i = 0; i < 40 && state === 'WORKING'; i++) {
        state = operationOf(await hostCall(bridge.client, 'terminus_wait', { operation: op.id, seconds: 1 })).state;
      }
      expect(state).not.toBe('WORKING');
      // A new upstream process serves the next call.
      const again = upstreamsOf(bridge.pid);
      expect(again).toHaveLength(1);
      expect(again[0]).not.toBe(upstreams[0]);
    },
    SLOW,
  );
});
