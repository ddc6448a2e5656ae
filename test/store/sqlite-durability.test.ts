import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { requestDigest } from '../../src/core/digest.js';
import { isTerminusError } from '../../src/core/errors.js';
import type { NewTask } from '../../src/store/port.js';
import { migrate } from '../../src/store/sqlite/migrate.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';

const T0 = 1_800_000_000_000;
const dir = mkdtempSync(join(tmpdir(), 'terminus-durable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = (): string => join(dir, `db-${(files += 1)}.sqlite`);

function task(id: string, overrides: Partial<NewTask> = {}): NewTask {
  const args = overrides.args ?? { id };
  return {
    id,
    owner: 'alice',
    tool: 'report',
    args,
    requestDigest: requestDigest('report', args),
    submissionKey: null,
    wire: 'mcp-tasks-ext',
    ttlMs: null,
    keepAliveMs: null,
    pollIntervalMs: 1_000,
    now: T0,
    ...overrides,
  };
}

describe('SQLite store: durability and migrations', () => {
  it('S9: reopening the file keeps tasks, leases, checkpoints, input responses, results and burned keys', async () => {
    const path = freshPath();
    const first = await openSqliteTaskStore({ path });
    await first.create(task('a', { submissionKey: 'k-a' }));
    await first.create(task('b'));
    const [claimed] = await first.claim({ workerId: 'w', now: T0, leaseMs: 60_000, limit: 1, tools: ['report'] });
    const fence = { taskId: 'a', workerId: 'w', epoch: claimed?.epoch ?? -1 };
    await first.checkpoint(fence, { step: 2 }, T0 + 1);
    await first.requestInput(fence, 'q', { method: 'elicitation/create', params: {} }, T0 + 2);
    await first.respond('alice', 'a', { q: 'yes' }, T0 + 3);
    await first.finish(fence, { status: 'completed', result: { content: [] }, resultDigest: 'rd' }, T0 + 4);
    await first.lookupKey('alice', 'k-burned', T0 + 5);
    const before = await first.list('alice', { limit: 10 }, T0 + 5);
    await first.close();

    const second = await openSqliteTaskStore({ path });
    expect(await second.list('alice', { limit: 10 }, T0 + 5)).toEqual(before);
    expect(await second.get('alice', 'a', T0 + 5)).toMatchObject({
      status: 'completed',
      checkpoint: { step: 2 },
      inputResponses: { q: 'yes' },
      resultDigest: 'rd',
      epoch: 1,
    });
    const burned = await second.create(task('late', { submissionKey: 'k-burned' })).catch((e: unknown) => e);
    expect(isTerminusError(burned, 'submission_key_burned')).toBe(true);
    expect((await second.create(task('a2', { submissionKey: 'k-a', args: { id: 'a' } }))).task.id).toBe('a');
    await second.close();
  });

  it('migrations are idempotent on reopen and recorded once in schema_migrations', async () => {
    const path = freshPath();
    await (await openSqliteTaskStore({ path })).close();
    await (await openSqliteTaskStore({ path })).close();
    const db = new Database(path);
    expect(db.prepare('SELECT id, name FROM schema_migrations').all()).toEqual([
      { id: 1, name: '001_init' },
      { id: 2, name: '002_claim_order' },
      { id: 3, name: '003_task_logs' },
      { id: 5, name: '005_events_webhooks' },
      { id: 6, name: '006_event_bound' },
    ]);
    expect(migrate(db)).toEqual([]);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('a database with a migration this code does not know is refused', async () => {
    const path = freshPath();
    await (await openSqliteTaskStore({ path })).close();
    const db = new Database(path);
    db.prepare("INSERT INTO schema_migrations (id, name) VALUES (99, '099_future')").run();
    db.close();
    const error = await openSqliteTaskStore({ path }).catch((e: unknown) => e);
    expect(isTerminusError(error, 'internal')).toBe(true);
  });

  it('S1: a create through one connection is readable through another on the same file', async () => {
    const path = freshPath();
    const writer = await openSqliteTaskStore({ path });
    const reader = await openSqliteTaskStore({ path });
    await writer.create(task('shared'));
    expect((await reader.get('alice', 'shared', T0))?.id).toBe('shared');
    await Promise.all([writer.close(), reader.close()]);
  });

  it('a closed store rejects with unavailable', async () => {
    const store = await openSqliteTaskStore({ path: ':memory:' });
    await store.close();
    expect(isTerminusError(await store.get('alice', 'x', T0).catch((e: unknown) => e), 'unavailable')).toBe(true);
    expect(isTerminusError(await store.create(task('x')).catch((e: unknown) => e), 'unavailable')).toBe(true);
  });
});

describe('SQLite store: group commit', () => {
  it('200 concurrent creates all resolve and all are readable, also after reopening', async () => {
    const path = freshPath();
    const store = await openSqliteTaskStore({ path });
    const ids = Array.from({ length: 200 }, (_, i) => `c-${i}`);
    const outcomes = await Promise.all(ids.map((id, i) => store.create(task(id, { now: T0 + i }))));
    expect(outcomes.every((o) => o.created)).toBe(true);
    for (const id of ids) expect((await store.get('alice', id, T0 + 500))?.id).toBe(id);
    await store.close();
    const reopened = await openSqliteTaskStore({ path });
    const page = await reopened.list('alice', { limit: 1000 }, T0 + 500);
    expect(page.tasks.map((t) => t.id).sort()).toEqual([...ids].sort());
    await reopened.close();
  });

  it('one failing write in a batch rolls back alone; the others in the same batch commit', async () => {
    const path = freshPath();
    const store = await openSqliteTaskStore({ path });
    await store.lookupKey('alice', 'burned', T0);
    // All issued in the same tick, so they share one transaction.
    const results = await Promise.allSettled([
      store.create(task('ok-1')),
      store.create(task('keyed', { submissionKey: 'k', args: { v: 1 } })),
      store.create(task('conflict', { submissionKey: 'k', args: { v: 2 } })),
      store.create(task('ok-2')),
      store.create(task('late', { submissionKey: 'burned' })),
      store.create(task('ok-1', { args: { dup: true } })),
      store.create(task('ok-3')),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    const reasons = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(reasons.map((e) => (isTerminusError(e) ? e.code : String(e)))).toEqual([
      'submission_key_conflict',
      'submission_key_burned',
      'invalid_argument',
    ]);
    await store.close();
    const reopened = await openSqliteTaskStore({ path });
    const ids = (await reopened.list('alice', { limit: 100 }, T0)).tasks.map((t) => t.id).sort();
    expect(ids).toEqual(['keyed', 'ok-1', 'ok-2', 'ok-3']);
    expect((await reopened.get('alice', 'ok-1', T0))?.args).toEqual({ id: 'ok-1' });
    await reopened.close();
  });
});

describe('SQLite store: crash', () => {
  it('S9: tasks whose create resolved survive kill -9 of the writing process', async () => {
    const path = freshPath();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'fixtures/sqlite-writer.ts'), path, '50'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.trim());
      });
      child.on('exit', (code) => reject(new Error(`writer exited early (${code}): ${stderr}`)));
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    expect(await exited).toBe(null);
    const ids = line.replace('committed ', '').split(',');
    expect(ids).toHaveLength(50);
    const store = await openSqliteTaskStore({ path });
    for (const id of ids) expect((await store.get('alice', id, T0))?.status).toBe('working');
    await store.close();
  });
});

describe('SQLite store: events across a crash', () => {
  it('S9 events: after kill -9 mid-stream the sequence is gap-free up to the stored eventSeq, which covers every resolved write', async () => {
    const path = freshPath();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'fixtures/sqlite-event-writer.ts'), path],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const resolved = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const seqs = [...out.matchAll(/seq (\d+)\n/g)].map((m) => Number(m[1]));
        if (seqs.length >= 200) resolve(Math.max(...seqs));
      });
      child.on('exit', (code) => reject(new Error(`writer exited early (${code}): ${stderr}`)));
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    expect(await exited).toBe(null);
    const store = await openSqliteTaskStore({ path });
    const task = await store.get('alice', 'crashing', T0);
    const last = task?.eventSeq ?? 0;
    expect(last).toBeGreaterThanOrEqual(resolved);
    const seqs: number[] = [];
    for (let after = 0; ;) {
      const page = await store.readEvents('alice', 'crashing', { after, limit: 1000 }, T0);
      if (page === null || page.events.length === 0) break;
      seqs.push(...page.events.map((e) => e.seq));
      after = page.events.at(-1)?.seq ?? after;
    }
    expect(seqs).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    // No event row beyond the counter (a write whose counter was lost but whose rows survived).
    await store.close();
    const raw = new Database(path, { readonly: true });
    const beyond = raw.prepare(`SELECT count(*) FROM task_events WHERE task_id = 'crashing' AND seq > ?`).pluck();
    expect(beyond.get(last)).toBe(0);
    raw.close();
  });
});
