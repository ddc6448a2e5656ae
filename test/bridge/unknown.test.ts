/**
 * An operation whose upstream forgot its task (kill -9 of the SDK 1.32 task server, which keeps
 * tasks in memory: the new process answers 404, then cannot look the key up) ends UNKNOWN. Every
 * answer about it (the call itself, terminus_wait, terminus_status, the same call again,
 * terminus_cancel) says the outcome is unknown and why, that waiting will not change it, and what
 * to do; none says it is still running or to wait again, and none waits out the inline budget (120 s
 * here, far past the host's timeout).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, ROOT, stdioCommand, tempDir } from '../cli/helpers.js';
import { connectBridge, hostCall, ledgerIn, operationOf, textOf, type BridgeClient } from './helpers.js';

const SLOW = 180_000;
const SDK132 = join(ROOT, 'test/fixtures/sdk132-tasks-server.ts');
const dir = tempDir('terminus-bridge-unknown-');
const fixtureLog = join(dir.path, 'sdk132.log');
let bridge: BridgeClient;

beforeAll(async () => {
  bridge = await connectBridge({
    ledger: ledgerIn(dir.path, 'unknown'),
    upstreams: [`sdk=stdio:${stdioCommand(SDK132)}`],
    inlineWaitSeconds: 120,
    env: { FIXTURE_LOG: fixtureLog },
  });
}, SLOW);
afterAll(async () => {
  await bridge?.close();
  killAll();
  dir.remove();
});

const created = (): number =>
  existsSync(fixtureLog)
    ? readFileSync(fixtureLog, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"created"')).length
    : 0;

const upstreamsOf = (pid: number): number[] =>
  execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes('sdk132-tasks-server'))
    .map((l) => Number(l.trim().split(/\s+/)[0]));

/** What every answer about an UNKNOWN operation must say, and must not. */
function expectUnknownText(text: string, id: string): void {
  expect(text).not.toMatch(/still running|did not finish|goes on|wait for the result|again later|check again/i);
  expect(text).toMatch(/outcome is unknown/);
  // The evidence: the new upstream process answered 404 for the task.
  expect(text).toMatch(/no longer answers for its task/);
  expect(text).toMatch(/waiting will not change/i);
  expect(text).toContain(`terminus_status {"operation":"${id}"}`);
  expect(text).toMatch(/terminus_cancel/);
  expect(text).toMatch(/operator/);
  expect(text).toContain(`terminus ops show ${id}`);
}

describe('terminus bridge: an operation whose server forgot its task (UNKNOWN)', () => {
  it(
    'every answer says the outcome is unknown, why, and what to do; none says to wait; none waits',
    async () => {
      // The inline wait (120 s) is past this request's timeout: the answer comes only because the operation ended.
      const call = bridge.client.callTool({ name: 'sdk_slow', arguments: { seconds: 600 } }, { timeout: 60_000 });
      for (let i = 0; i < 300 && created() === 0; i++) await sleep(100);
      expect(created()).toBe(1);
      const upstreams = upstreamsOf(bridge.pid);
      expect(upstreams).toHaveLength(1);
      process.kill(upstreams[0]!, 'SIGKILL');

      const inline = await call;
      const op = operationOf(inline);
      expect(op.state).toBe('UNKNOWN');
      expect(inline.isError).toBe(true);
      expectUnknownText(textOf(inline), op.id);
      expect(inline.structuredContent).toMatchObject({ next: 'operator' });

      // terminus_wait returns at once (the host's 5 s timeout, against a 120 s inline wait).
      for (let i = 0; i < 2; i++) {
        const waited = await hostCall(bridge.client, 'terminus_wait', { operation: op.id });
        expect(operationOf(waited).state).toBe('UNKNOWN');
        expect(waited.isError).toBe(true);
        expectUnknownText(textOf(waited), op.id);
      }
      const waitedLong = await hostCall(bridge.client, 'terminus_wait', { operation: op.id, seconds: 100 });
      expectUnknownText(textOf(waitedLong), op.id);

      const status = await hostCall(bridge.client, 'terminus_status', { operation: op.id });
      expect(operationOf(status).state).toBe('UNKNOWN');
      expectUnknownText(textOf(status), op.id);

      // The same call again attaches to it (never a second task) and says the same, at once.
      const again = await hostCall(bridge.client, 'sdk_slow', { seconds: 600 });
      expect(operationOf(again)).toMatchObject({ id: op.id, state: 'UNKNOWN' });
      expectUnknownText(textOf(again), op.id);
      expect(created()).toBe(1);

      // terminus_cancel: nothing can be sent for it; the answer says so and does not invite checking again.
      const cancel = await hostCall(bridge.client, 'terminus_cancel', { operation: op.id });
      expect(cancel.structuredContent).toMatchObject({ cancel: 'not_sent' });
      expect(textOf(cancel)).toMatch(/nothing was sent/i);
      expectUnknownText(textOf(cancel), op.id);

      const listed = textOf(await hostCall(bridge.client, 'terminus_operations'));
      expect(listed).toMatch(new RegExp(`${op.id} sdk_slow: UNKNOWN \\(outcome unknown`));
    },
    SLOW,
  );
});
