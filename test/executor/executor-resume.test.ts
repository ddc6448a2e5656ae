/**
 * Crash recovery: an executor stops at several points (its ledger file survives, in-flight requests
 * die with it), a new executor opens the same SQLite ledger and `resume()`s. Every call node ends
 * with exactly one receipt and the server holds exactly one task per call.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestDigest } from '../../src/core/digest.js';
import { TerminusError } from '../../src/core/errors.js';
import type { Ledger } from '../../src/executor/ledger-port.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { newOperation } from '../../src/executor/operation.js';
import {
  openExecutor,
  startProxy,
  startServer,
  waitFor,
  type ProxyAction,
  type TestServer,
} from './executor-helpers.js';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startServer();
  dir = await mkdtemp(join(tmpdir(), 'terminus-executor-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

let files = 0;
const ledgerFile = (): string => join(dir, `ledger-${++files}.db`);

async function tasksLabelled(label: string): Promise<number> {
  return (await server.tasks()).filter((t) => t.args.label === label).length;
}

/** Resumes on a fresh ledger handle (a new process) and waits for the call node's receipt. */
async function resumeAndSettle(path: string, url: string, callNodeId: string) {
  const ledger = openSqliteLedger({ path });
  const { executor } = await openExecutor(url, { ledger });
  try {
    const handles = await executor.resume();
    expect(handles.map((h) => h.callNodeId)).toContain(callNodeId);
    const receipt = await handles.find((h) => h.callNodeId === callNodeId)!.result();
    const item = await executor.outbox.next();
    expect(item.receipt.id).toBe(receipt.id);
    return { receipt, record: await ledger.loadByCallNode(callNodeId) };
  } finally {
    await executor.close();
    await ledger.close();
  }
}

describe('executor crash and resume()', () => {
  it('crash after the record was written, before the submission left', async () => {
    // The server's callers are anonymous: a key needs 128 random bits (issue 12 item 1).
    const BEFORE_SEND_KEY = `skey-before-send-${randomBytes(16).toString('base64url')}`;
    const path = ledgerFile();
    const ledger = openSqliteLedger({ path });
    const args = { seconds: 0.1, label: 'crash-before-send' };
    await ledger.create({
      ...newOperation({
        id: 'op-before-send',
        callNodeId: 'n-before-send',
        requestDigest: requestDigest('slow_compute', args),
        tool: { name: 'slow_compute', descriptorVersion: 'unversioned' },
        body: args,
        wire: { name: 'mcp-tasks-ext', adapterVersion: 'tasks-ext-client/1' },
        submissionKey: BEFORE_SEND_KEY,
        executionEpoch: 0,
        now: Date.now(),
        budgetMs: 60_000,
      }),
      server: 's',
    });
    await ledger.close();
    const { receipt, record } = await resumeAndSettle(path, server.url, 'n-before-send');
    expect(receipt.status).toBe('completed');
    expect(record?.submissionKey).toBe(BEFORE_SEND_KEY);
    expect(await tasksLabelled('crash-before-send')).toBe(1);
  });

  it('crash after the submission left, before its response: the key lookup finds the task', async () => {
    const path = ledgerFile();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const proxy = await startProxy(server.url, (request): ProxyAction =>
      request.method === 'tools/call' ? { kind: 'hold_response', release: held } : { kind: 'forward' },
    );
    const ledger = openSqliteLedger({ path });
    const { executor } = await openExecutor(proxy.url, { ledger });
    await executor.submit({
      callNodeId: 'n-in-flight',
      server: 's',
      tool: 'slow_compute',
      args: { seconds: 0.1, label: 'crash-in-flight' },
    });
    await waitFor(async () => (await tasksLabelled('crash-in-flight')) === 1, 'task created on the server');
    await executor.close();
    await ledger.close();
    release();
    await proxy.close();

    const { receipt, record } = await resumeAndSettle(path, server.url, 'n-in-flight');
    expect(receipt.status).toBe('completed');
    expect(record?.history.map((h) => h.to)).toContain('SUBMISSION_UNKNOWN');
    expect(record?.priorSubmissionKeys).toEqual([]);
    expect(await tasksLabelled('crash-in-flight')).toBe(1);
  });

  it('crash while polling: the resumed executor polls the same task', async () => {
    const path = ledgerFile();
    const ledger = openSqliteLedger({ path });
    const { executor } = await openExecutor(server.url, { ledger });
    await executor.submit({
      callNodeId: 'n-polling',
      server: 's',
      tool: 'slow_compute',
      args: { seconds: 0.5, label: 'crash-polling' },
    });
    await waitFor(async () => (await ledger.loadByCallNode('n-polling'))?.state === 'WORKING', 'WORKING');
    const taskId = (await ledger.loadByCallNode('n-polling'))?.taskId;
    await executor.close();
    await ledger.close();

    const { receipt } = await resumeAndSettle(path, server.url, 'n-polling');
    expect(receipt.status).toBe('completed');
    expect(receipt.taskId).toBe(taskId);
    expect(await tasksLabelled('crash-polling')).toBe(1);
  });

  it('crash during acceptance (the transaction never commits): the resumed executor fetches and accepts once', async () => {
    const path = ledgerFile();
    const real = openSqliteLedger({ path });
    const crashing: Ledger = {
      ...real,
      acceptTerminal: async () => {
        throw new TerminusError('unavailable', 'simulated crash inside acceptTerminal');
      },
    };
    const { executor } = await openExecutor(server.url, { ledger: crashing });
    const op = await executor.submit({
      callNodeId: 'n-accepting',
      server: 's',
      tool: 'slow_compute',
      args: { seconds: 0.1, label: 'crash-accept' },
    });
    // The ledger's own words, not the class name ("TerminusError: ...") before them.
    await expect(op.result()).rejects.toMatchObject({
      code: 'ledger_error',
      message: `operation ${op.operationId}: simulated crash inside acceptTerminal`,
    });
    expect((await real.loadByCallNode('n-accepting'))?.state).toBe('FETCHING_RESULT');
    expect(await real.getReceipt('n-accepting')).toBeNull();
    await executor.close();
    await real.close();

    const { receipt } = await resumeAndSettle(path, server.url, 'n-accepting');
    expect(receipt.status).toBe('completed');
    expect(await tasksLabelled('crash-accept')).toBe(1);
  });

  it('outbox: each receipt yielded once per executor until acked; a new executor yields only the unacked', async () => {
    const path = ledgerFile();
    const first = openSqliteLedger({ path });
    const a = await openExecutor(server.url, { ledger: first });
    const handles = await Promise.all(
      ['x', 'y', 'z'].map((n) =>
        a.executor.submit({
          callNodeId: `n-out-${n}`,
          server: 's',
          tool: 'slow_compute',
          args: { seconds: 0, label: `out-${n}` },
        }),
      ),
    );
    const receipts = await Promise.all(handles.map((h) => h.result()));
    const yielded = [await a.executor.outbox.next(), await a.executor.outbox.next(), await a.executor.outbox.next()];
    expect(new Set(yielded.map((i) => i.receipt.id))).toEqual(new Set(receipts.map((r) => r.id)));
    // Nothing more within this executor, although none is acked yet.
    await expect(a.executor.outbox.next(AbortSignal.timeout(200))).rejects.toBeDefined();
    expect(await a.executor.outbox.ack(receipts[0]!.id)).toBe(true);
    expect(await a.executor.outbox.ack(receipts[1]!.id)).toBe(true);
    await a.executor.close();
    await first.close();

    const second = openSqliteLedger({ path });
    const b = await openExecutor(server.url, { ledger: second });
    try {
      expect(await b.executor.resume()).toEqual([]);
      const again = await b.executor.outbox.next();
      expect(again.receipt.id).toBe(receipts[2]!.id);
      await expect(b.executor.outbox.next(AbortSignal.timeout(200))).rejects.toBeDefined();
      for (const n of ['x', 'y', 'z']) expect((await second.getReceipt(`n-out-${n}`))?.status).toBe('completed');
    } finally {
      await b.executor.close();
      await second.close();
    }
  });
});
