/**
 * C13 against a real misbehaving server over loopback HTTP: the real terminus server behind an HTTP
 * proxy that rewrites its answers as peers were seen to (a completed task reported `cancelled` once
 * it was cancelled afterwards; a result whose digest changes between reads), and the real executor
 * on a SQLite ledger file. The executor never follows the change, never accepts the changed result,
 * keeps both reports as evidence (UNKNOWN), and a restarted executor does not follow it either.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import type { Evidence } from '../../src/executor/operation.js';
import { openExecutor, startServer, waitFor, type TestServer } from './executor-helpers.js';

type Task = Record<string, unknown>;
/** Rewrites one task object as the server reported it; `n` counts this task's terminal answers (1 = first). */
type Lie = (task: Task, n: number) => Task;

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startServer();
  dir = await mkdtemp(join(tmpdir(), 'terminus-misbehaving-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * A misbehaving server: forwards to the real one and rewrites every terminal task it answers
 * (`tasks/get` and the key lookup) after the first, which it answers truthfully (a `tasks/get`, or
 * the events page that carries the terminal status).
 */
async function misbehaving(lie: Lie): Promise<{ url: string; methods: string[]; close(): Promise<void> }> {
  const terminalAnswers = new Map<string, number>();
  const methods: string[] = [];
  const rewrite = (task: Task): Task => {
    const status = task.status;
    if (status !== 'completed' && status !== 'failed' && status !== 'cancelled') return task;
    const id = String(task.taskId);
    const n = (terminalAnswers.get(id) ?? 0) + 1;
    terminalAnswers.set(id, n);
    return n === 1 ? task : lie(task, n);
  };
  const proxy: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const method = (JSON.parse(body) as { method?: string }).method ?? '';
      methods.push(method);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
      }
      const answer = await fetch(server.url, { method: 'POST', headers, body });
      let text = await answer.text();
      const type = answer.headers.get('content-type') ?? 'application/json';
      if (answer.ok && (method === 'tasks/get' || method === 'terminus/tasks/lookup')) {
        // The answer is one JSON-RPC message, as JSON or as one SSE `data:` line.
        text = text.replace(/\{.*\}/s, (json) => {
          const message = JSON.parse(json) as { result?: Task };
          const result = message.result;
          if (result === undefined) return json;
          const lied = method === 'tasks/get' ? rewrite(result) : lookupLie(result, rewrite);
          return JSON.stringify({ ...message, result: lied });
        });
      }
      if (answer.ok && method === 'terminus/tasks/events') {
        // A page with the terminal status event is a truthful terminal answer too: the first one
        // when the executor follows the task by its events (issue 32), so the lies start after it.
        const page = (JSON.parse(/\{.*\}/s.exec(text)?.[0] ?? '{}') as { result?: Task }).result;
        const events = (page?.events ?? []) as Task[];
        const end = events.find(
          (e) => e.kind === 'status' && ['completed', 'failed', 'cancelled'].includes(String(e.status)),
        );
        if (page !== undefined && end !== undefined) rewrite({ taskId: page.taskId, status: end.status });
      }
      const out: Record<string, string> = { 'content-type': type };
      const session = answer.headers.get('mcp-session-id');
      if (session !== null) out['mcp-session-id'] = session;
      res.writeHead(answer.status, out);
      res.end(text);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`,
    methods,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

function lookupLie(result: Task, rewrite: (task: Task) => Task): Task {
  const task = result.task as Task | undefined;
  return result.found === true && task !== undefined ? { ...result, task: rewrite(task) } : result;
}

/** The peer that rewrote a completed task to `cancelled` when it was cancelled afterwards. */
const rewrittenToCancelled: Lie = (task) => {
  const { result: _result, error: _error, ...rest } = task;
  return { ...rest, status: 'cancelled', statusMessage: 'cancelled' };
};

/** The peer whose result changes on every read. */
const changingResult: Lie = (task, n) => {
  const result = task.result as { content?: unknown[] } | undefined;
  return { ...task, result: { ...result, content: [...(result?.content ?? []), { type: 'text', text: `read ${n}` }] } };
};

const C13_KINDS: readonly Evidence['kind'][] = ['terminal_status_changed', 'result_changed'];

async function runUntilUnknown(url: string, path: string, callNodeId: string) {
  const ledger = openSqliteLedger({ path });
  const { executor } = await openExecutor(url, { ledger });
  try {
    const handle = await executor.submit({ callNodeId, server: 's', tool: 'quiet_job', args: { ms: 20 } });
    handle.result().catch(() => {});
    await waitFor(async () => (await ledger.loadByCallNode(callNodeId))?.state === 'UNKNOWN', 'UNKNOWN');
    return { record: (await ledger.loadByCallNode(callNodeId))!, receipt: await ledger.getReceipt(callNodeId) };
  } finally {
    await executor.close();
    await ledger.close();
  }
}

/** A new executor process on the same ledger resumes the operation: its key lookup finds the lie again. */
async function resumeOnce(url: string, path: string, callNodeId: string, lookups: () => number) {
  const ledger = openSqliteLedger({ path });
  const { executor } = await openExecutor(url, { ledger });
  try {
    const before = lookups();
    const handles = await executor.resume();
    expect(handles.map((h) => h.callNodeId)).toContain(callNodeId);
    for (const h of handles) h.result().catch(() => {});
    await waitFor(() => lookups() > before, 'the reconciling key lookup');
    // The lookup's answer is stepped and written within a few ms; then nothing else is owed.
    await waitFor(async () => {
      const r = await ledger.loadByCallNode(callNodeId);
      return r !== null && (r.state !== 'UNKNOWN' || r.evidence.length > 1);
    }, 'the lookup answer to be recorded');
    return { record: (await ledger.loadByCallNode(callNodeId))!, receipt: await ledger.getReceipt(callNodeId) };
  } finally {
    await executor.close();
    await ledger.close();
  }
}

describe('C13: a misbehaving server over loopback HTTP', () => {
  it('a completed task reported cancelled afterwards: UNKNOWN with both statuses, never a cancelled receipt, not after a restart either', async () => {
    const peer = await misbehaving(rewrittenToCancelled);
    const path = join(dir, 'rewritten.db');
    try {
      const first = await runUntilUnknown(peer.url, path, 'n-rewritten');
      expect(first.receipt).toBeNull();
      const evidence = first.record.evidence.find((e) => e.kind === 'terminal_status_changed');
      expect(evidence, JSON.stringify(first.record.evidence)).toBeDefined();
      expect(evidence!.observed).toMatchObject({ status: 'completed' });
      expect(evidence!.reported).toMatchObject({ status: 'cancelled' });
      expect(evidence!.reported!.at).toBeGreaterThanOrEqual(evidence!.observed!.at);
      expect(first.record.observedTerminal?.status).toBe('completed');

      // The restarted executor reconciles by key; the lookup finds the task `cancelled`: not followed.
      const lookups = () => peer.methods.filter((m) => m === 'terminus/tasks/lookup').length;
      const again = await resumeOnce(peer.url, path, 'n-rewritten', lookups);
      expect(again.receipt).toBeNull();
      expect(again.record.state).toBe('UNKNOWN');
      expect(again.record.evidence.filter((e) => C13_KINDS.includes(e.kind)).length).toBeGreaterThanOrEqual(2);

      // An operator sees both reports and when: `terminus ops show` on the ledger.
      const shown = execFileSync('node', ['dist/cli/main.js', 'ops', 'show', 'n-rewritten', '--ledger', path], {
        encoding: 'utf8',
      });
      expect(shown).toMatch(/terminal_status_changed: server reported cancelled at \S+ after completed/);
    } finally {
      await peer.close();
    }
  }, 60_000);

  it('a result whose digest changes between reads: never accepted, UNKNOWN with both digests', async () => {
    const peer = await misbehaving(changingResult);
    const path = join(dir, 'changing.db');
    try {
      const { record, receipt } = await runUntilUnknown(peer.url, path, 'n-changing');
      expect(receipt).toBeNull();
      const evidence = record.evidence.find((e) => e.kind === 'result_changed');
      expect(evidence, JSON.stringify(record.evidence)).toBeDefined();
      expect(evidence!.observed?.resultDigest).toMatch(/^[0-9a-f]{64}$/);
      expect(evidence!.reported?.resultDigest).toMatch(/^[0-9a-f]{64}$/);
      expect(evidence!.reported!.resultDigest).not.toBe(evidence!.observed!.resultDigest);
      expect(record.resultDigest).toBeNull();
    } finally {
      await peer.close();
    }
  }, 60_000);
});
