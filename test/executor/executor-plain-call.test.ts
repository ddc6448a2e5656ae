/**
 * C12 (issue 17, known defect): a plain call whose answer is lost. Our server refuses a submission
 * key for a tool that never runs as a task (`-32602`, `submission_key_needs_task`), so the
 * Tasks-extension adapter calls the tool again without the key. When that plain call reaches the
 * server (the tool runs) and its answer is lost, the key was never used: a lookup of it says "never
 * created" for a call that ran. The executor must not take that for a proof: no second send, no
 * NEVER_CREATED, UNKNOWN with the evidence for an operator, and a restarted executor leaves it so.
 *
 * Real server (`greet`, taskSupport `forbidden`) on 127.0.0.1:0, a proxy that passes the plain call
 * on and destroys its answer, the real executor on a SQLite ledger file.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { SUBMISSION_KEY_META } from '../../src/server/wire/tasks-ext/constants.js';
import {
  openExecutor,
  startProxy,
  startServer,
  waitFor,
  type ProxyRequest,
  type TestServer,
} from './executor-helpers.js';

let server: TestServer;
let legacy: TestServer;
let dir: string;

beforeAll(async () => {
  [server, legacy] = await Promise.all([startServer(), startServer({ wires: 'legacy' })]);
  dir = await mkdtemp(join(tmpdir(), 'terminus-plain-call-'));
});
afterAll(async () => {
  await Promise.all([server.close(), legacy.close()]);
  await rm(dir, { recursive: true, force: true });
});

const keyed = (r: ProxyRequest): boolean =>
  typeof (r.params._meta as Record<string, unknown> | undefined)?.[SUBMISSION_KEY_META] === 'string';
const plainCalls = (seen: readonly ProxyRequest[]): number =>
  seen.filter((r) => r.method === 'tools/call' && !keyed(r)).length;

describe('C12: the answer to a plain call is lost', () => {
  it('the call ran: never resubmitted, never NEVER_CREATED, UNKNOWN with the evidence, also after a restart', async () => {
    const proxy = await startProxy(server.url, (request) =>
      request.method === 'tools/call' && !keyed(request) ? { kind: 'drop_response' } : { kind: 'forward' },
    );
    const path = join(dir, 'plain.db');
    const node = 'n-plain-lost';
    try {
      const ledger = openSqliteLedger({ path });
      const { executor } = await openExecutor(proxy.url, { ledger, wire: 'mcp-tasks-ext' });
      try {
        const handle = await executor.submit({ callNodeId: node, server: 's', tool: 'greet', args: { name: 'x' } });
        handle.result().catch(() => {});
        await waitFor(async () => {
          const r = await ledger.loadByCallNode(node);
          return r !== null && (r.state === 'UNKNOWN' || r.state === 'NEVER_CREATED' || plainCalls(proxy.seen) > 1);
        }, 'the lost plain call to be settled');
        // Anything owed after that step (a lookup, a resubmission) would go out within a few ms.
        await new Promise((resolve) => setTimeout(resolve, 300));
        const record = (await ledger.loadByCallNode(node))!;
        expect(plainCalls(proxy.seen), JSON.stringify(record.history)).toBe(1);
        expect(record.state).toBe('UNKNOWN');
        expect(record.priorSubmissionKeys).toEqual([]);
        const evidence = record.evidence.find((e) => e.kind === 'plain_call_lost');
        expect(evidence, JSON.stringify(record.evidence)).toBeDefined();
        expect(evidence!.detail).toMatch(/without a submission key/);
        expect(await ledger.getReceipt(node)).toBeNull();
        // C4: the operator finds it by its key.
        expect((await ledger.findBySubmissionKey(record.submissionKey))?.callNodeId).toBe(node);
      } finally {
        await executor.close();
        await ledger.close();
      }

      // A restarted executor resumes it: a key lookup would say "never created"; it must not follow.
      const again = openSqliteLedger({ path });
      const { executor: second } = await openExecutor(proxy.url, { ledger: again, wire: 'mcp-tasks-ext' });
      try {
        for (const h of await second.resume()) h.result().catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, 500));
        const record = (await again.loadByCallNode(node))!;
        expect(record.state).toBe('UNKNOWN');
        expect(plainCalls(proxy.seen)).toBe(1);
        expect(proxy.seen.filter((r) => r.method === 'tools/call')).toHaveLength(2);
      } finally {
        await second.close();
        await again.close();
      }
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('the executor dies while the plain call is on the wire: the restart does not look the unused key up nor resubmit', async () => {
    const path = join(dir, 'died.db');
    const node = 'n-plain-died';
    const base = openSqliteLedger({ path });
    // The process dies the moment the plain call reaches the server: nothing it does after is written.
    let dead = false;
    const ledger = new Proxy(base, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          dead && (name === 'apply' || name === 'acceptTerminal')
            ? Promise.reject(new Error('the process died'))
            : (value as (...a: unknown[]) => unknown).apply(target, args);
      },
    });
    const proxy = await startProxy(server.url, (request) => {
      if (request.method !== 'tools/call' || keyed(request)) return { kind: 'forward' };
      dead = true;
      return { kind: 'drop_response' };
    });
    try {
      const { executor } = await openExecutor(proxy.url, { ledger, wire: 'mcp-tasks-ext' });
      const handle = await executor.submit({ callNodeId: node, server: 's', tool: 'greet', args: { name: 'y' } });
      handle.result().catch(() => {});
      await waitFor(() => dead, 'the plain call to reach the server');
      await new Promise((resolve) => setTimeout(resolve, 200));
      await executor.close().catch(() => {});
      await base.close();

      const again = openSqliteLedger({ path });
      const { executor: second } = await openExecutor(proxy.url, { ledger: again, wire: 'mcp-tasks-ext' });
      try {
        for (const h of await second.resume()) h.result().catch(() => {});
        await waitFor(async () => {
          const r = await again.loadByCallNode(node);
          return r !== null && (r.state === 'UNKNOWN' || r.state === 'NEVER_CREATED' || plainCalls(proxy.seen) > 1);
        }, 'the restarted executor to settle the call');
        await new Promise((resolve) => setTimeout(resolve, 300));
        const record = (await again.loadByCallNode(node))!;
        expect(plainCalls(proxy.seen), JSON.stringify(record.history)).toBe(1);
        expect(record.state).toBe('UNKNOWN');
        expect(record.evidence.map((e) => e.kind)).toEqual(['plain_call_sent', 'plain_call_lost']);
        expect(proxy.seen.filter((r) => r.method === 'terminus/tasks/lookup')).toHaveLength(0);
      } finally {
        await second.close();
        await again.close();
      }
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('2025-11-25: a tool that makes no task is called plainly; its lost answer ends UNKNOWN, never looked up nor resubmitted', async () => {
    // T-09: `greet` is `forbidden`, so the call goes without `params.task`: no task, nothing a key finds.
    const plain2025 = (r: ProxyRequest): boolean => r.method === 'tools/call' && r.params.task === undefined;
    const proxy = await startProxy(legacy.url, (request) =>
      plain2025(request) ? { kind: 'drop_response' } : { kind: 'forward' },
    );
    const path = join(dir, 'legacy.db');
    const node = 'n-plain-2025';
    try {
      const ledger = openSqliteLedger({ path });
      const { executor } = await openExecutor(proxy.url, { ledger, wire: 'mcp-2025-11-25' });
      try {
        const handle = await executor.submit({ callNodeId: node, server: 's', tool: 'greet', args: { name: 'z' } });
        handle.result().catch(() => {});
        await waitFor(async () => {
          const r = await ledger.loadByCallNode(node);
          const calls = proxy.seen.filter(plain2025).length;
          return r !== null && (r.state === 'UNKNOWN' || r.state === 'NEVER_CREATED' || calls > 1);
        }, 'the lost plain call to be settled');
        await new Promise((resolve) => setTimeout(resolve, 300));
        const record = (await ledger.loadByCallNode(node))!;
        expect(proxy.seen.filter(plain2025), JSON.stringify(record.history)).toHaveLength(1);
        expect(record.state).toBe('UNKNOWN');
        expect(record.evidence.map((e) => e.kind)).toEqual(['plain_call_sent', 'plain_call_lost']);
        expect(proxy.seen.filter((r) => r.method === 'terminus/tasks/lookup')).toHaveLength(0);
      } finally {
        await executor.close();
        await ledger.close();
      }
    } finally {
      await proxy.close();
    }
  }, 60_000);
});
