/**
 * Operations over their whole life through `terminus bridge` (stdio) in front of `terminus serve`:
 * kill -9 of the bridge while an operation runs and a new bridge on the same ledger (C9, C11:
 * `terminus_wait` returns the result, one receipt, one upstream task); cancel while working and
 * after completion (C8); an input round answered by an elicitation-capable host and by
 * `terminus_respond` (C10); another bridge's operation is not reachable by its id.
 */
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killAll, startServe, tempDir, type Served } from '../cli/helpers.js';
import type { Client } from '@modelcontextprotocol/client';
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
  type OperationFacts,
} from './helpers.js';

const SLOW = 180_000;
const dir = tempDir('terminus-bridge-life-');
let served: Served;
const open: BridgeClient[] = [];

async function bridgeOn(ledger: string, extra: Partial<Parameters<typeof connectBridge>[0]> = {}) {
  const bridge = await connectBridge({ ledger, upstreams: [`reports=${served.url}`], ...extra });
  open.push(bridge);
  return bridge;
}

beforeAll(async () => {
  served = await startServe(dir.path, ['--fixtures', 'conformance']);
}, SLOW);
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((b) => b.close()));
});
afterAll(async () => {
  await served?.stop();
  killAll();
  dir.remove();
});

function upstreamStatus(label: string): string[] {
  const sqlite = new Database(served.db, { readonly: true, fileMustExist: true });
  try {
    const rows = sqlite
      .prepare(
        "SELECT status FROM tasks WHERE json_extract(args, '$.label') = ? OR json_extract(args, '$.filename') = ?",
      )
      .all(label, label) as { status: string }[];
    return rows.map((r) => r.status);
  } finally {
    sqlite.close();
  }
}

/** terminus_status until the operation shows an open question (bounded). */
async function untilInput(client: Client, id: string): Promise<OperationFacts> {
  for (let i = 0; i < 100; i++) {
    const op = operationOf(await hostCall(client, 'terminus_wait', { operation: id, seconds: 1 }));
    if (op.input !== undefined && op.input.length > 0) return op;
  }
  throw new Error(`operation ${id} never asked for input`);
}

describe('terminus bridge: restarts, cancel, input, ownership', () => {
  it(
    'kill -9 while an operation runs; a new bridge on the same ledger returns the result, one receipt',
    async () => {
      const ledger = ledgerIn(dir.path, 'restart');
      const label = 'survives-kill';
      const first = await bridgeOn(ledger);
      const op = operationOf(await hostCall(first.client, 'slow_compute', { seconds: 6, label }));
      expect(op.state).not.toBe('ACCEPTED');
      process.kill(first.pid, 'SIGKILL');

      const second = await bridgeOn(ledger);
      const result = await waitResult(second.client, op.id);
      expect(textOf(result)).toBe(`${label}: done after 6 s`);
      expect(ledgerFacts(ledger, label)).toEqual({ operations: 1, receipts: 1 });
      expect(upstreamTasks(served.db, label)).toBe(1);
      // Asked again after the result was delivered: the same result, still one receipt.
      expect(textOf(await hostCall(second.client, 'terminus_wait', { operation: op.id }))).toBe(
        `${label}: done after 6 s`,
      );
      expect(ledgerFacts(ledger, label)).toEqual({ operations: 1, receipts: 1 });
    },
    SLOW,
  );

  it(
    'terminus_cancel while working: the server cancels it; after completion: nothing to cancel',
    async () => {
      const bridge = await bridgeOn(ledgerIn(dir.path, 'cancel'));
      const running = operationOf(await hostCall(bridge.client, 'slow_compute', { seconds: 120, label: 'to-cancel' }));
      const cancelled = await hostCall(bridge.client, 'terminus_cancel', { operation: running.id });
      expect(textOf(cancelled)).toMatch(/cancel/);
      const settled = await waitResult(bridge.client, running.id);
      expect(operationOf(settled).outcome).toBe('cancelled');
      expect(upstreamStatus('to-cancel')).toEqual(['cancelled']);

      const short = operationOf(await hostCall(bridge.client, 'slow_compute', { seconds: 3, label: 'finished' }));
      expect(textOf(await waitResult(bridge.client, short.id))).toBe('finished: done after 3 s');
      const late = await hostCall(bridge.client, 'terminus_cancel', { operation: short.id });
      expect(late.isError).toBeFalsy();
      expect(textOf(late)).toMatch(/already ended \(completed\); nothing to cancel/);
      expect(upstreamStatus('finished')).toEqual(['completed']);
    },
    SLOW,
  );

  it(
    'an input round is asked to an elicitation-capable host, bound to the operation',
    async () => {
      const asked: string[] = [];
      const bridge = await bridgeOn(ledgerIn(dir.path, 'elicit'), {
        elicitation: (params) => {
          asked.push(String(params.message));
          return { action: 'accept', content: { confirm: true } };
        },
      });
      const first = await hostCall(bridge.client, 'confirm_delete', { filename: 'elicited.txt' });
      const result =
        (first.structuredContent as { operation?: unknown } | undefined)?.operation === undefined
          ? first
          : await waitResult(bridge.client, operationOf(first).id);
      expect(textOf(result)).toBe('Deleted elicited.txt');
      expect(asked).toEqual(['Delete elicited.txt?']);
    },
    SLOW,
  );

  it(
    'without elicitation the handle says what is asked, and terminus_respond answers it',
    async () => {
      const bridge = await bridgeOn(ledgerIn(dir.path, 'respond'));
      const first = operationOf(await hostCall(bridge.client, 'confirm_delete', { filename: 'responded.txt' }));
      const asking = await untilInput(bridge.client, first.id);
      expect(asking.input![0]!.message).toBe('Delete responded.txt?');
      const status = await hostCall(bridge.client, 'terminus_status', { operation: first.id });
      expect(textOf(status)).toMatch(/terminus_respond/);

      const answered = await hostCall(bridge.client, 'terminus_respond', {
        operation: first.id,
        response: { confirm: true },
      });
      const result =
        (answered.structuredContent as { operation?: unknown } | undefined)?.operation === undefined
          ? answered
          : await waitResult(bridge.client, first.id);
      expect(textOf(result)).toBe('Deleted responded.txt');
      // The round is answered: a second answer is refused, not replayed.
      const twice = await hostCall(bridge.client, 'terminus_respond', {
        operation: first.id,
        response: { confirm: false },
      });
      expect(twice.isError).toBe(true);
      expect(upstreamStatus('responded.txt')).toEqual(['completed']);
    },
    SLOW,
  );

  it(
    "another bridge's operation is not reachable by its id, and not listed",
    async () => {
      const ledger = ledgerIn(dir.path, 'shared');
      const mine = await bridgeOn(ledger);
      const op = operationOf(await hostCall(mine.client, 'slow_compute', { seconds: 3, label: 'private' }));
      await waitResult(mine.client, op.id);
      await mine.close();

      const other = await bridgeOn(ledger, { extra: ['--name', 'someone-else'] });
      for (const tool of ['terminus_wait', 'terminus_status', 'terminus_cancel']) {
        const answer = await hostCall(other.client, tool, { operation: op.id });
        expect(answer.isError).toBe(true);
        expect(textOf(answer)).toMatch(/unknown or not yours/);
        expect(textOf(answer)).not.toContain('private');
      }
      const respond = await hostCall(other.client, 'terminus_respond', { operation: op.id, response: {} });
      expect(textOf(respond)).toMatch(/unknown or not yours/);
      const listed = await hostCall(other.client, 'terminus_operations');
      expect(JSON.stringify(listed)).not.toContain(op.id);
      await expect(other.client.readResource({ uri: `terminus://operations/${op.id}` })).rejects.toThrow();
    },
    SLOW,
  );
});
