import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { TerminusError } from '../../src/core/errors.js';
import { createWriteQueue } from '../../src/store/sqlite/group-commit.js';
import { DEFAULT_COMMIT_DELAY_MS, openSqliteTaskStore } from '../../src/sqlite.js';

function setup(maxBatch: number, commitDelayMs?: number) {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (v TEXT NOT NULL)');
  const log: string[] = [];
  const commits: number[] = [];
  const queue = createWriteQueue(db, {
    maxBatch,
    mapError: (e) => e,
    onCommit: (report) => commits.push(report.writes),
    ...(commitDelayMs === undefined ? {} : { commitDelayMs }),
  });
  const insert = (v: string) => () => {
    db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
    log.push(`ran ${v}`);
    return v;
  };
  const rows = () => db.prepare('SELECT v FROM t ORDER BY v').pluck().all();
  return { db, log, commits, queue, insert, rows };
}

describe('SQLite group commit queue', () => {
  it('writes of one tick run in one transaction and settle only after it committed', async () => {
    const { db, log, queue, insert } = setup(512);
    const settled = ['a', 'b', 'c'].map((v) =>
      queue.enqueue(insert(v)).then((value) => {
        log.push(`resolved ${value} inTransaction=${String(db.inTransaction)}`);
      }),
    );
    await Promise.all(settled);
    expect(log).toEqual([
      'ran a',
      'ran b',
      'ran c',
      'resolved a inTransaction=false',
      'resolved b inTransaction=false',
      'resolved c inTransaction=false',
    ]);
  });

  it('maxBatch caps a transaction; the rest goes into the next one', async () => {
    const { log, queue, insert } = setup(2);
    await Promise.all(['a', 'b', 'c'].map((v) => queue.enqueue(insert(v)).then(() => log.push(`resolved ${v}`))));
    expect(log).toEqual(['ran a', 'ran b', 'resolved a', 'resolved b', 'ran c', 'resolved c']);
  });

  it('a write that fails after writing rolls back to its savepoint alone', async () => {
    const { db, queue, insert, rows } = setup(512);
    const failing = () => {
      db.prepare('INSERT INTO t (v) VALUES (?)').run('half');
      throw new Error('fails after its first statement');
    };
    const results = await Promise.allSettled([
      queue.enqueue(insert('a')),
      queue.enqueue(failing),
      queue.enqueue(insert('b')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(rows()).toEqual(['a', 'b']);
  });

  it('a failed COMMIT rejects every caller of the batch', async () => {
    const { db, queue, rows } = setup(512);
    db.exec(
      'CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (p INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)',
    );
    db.pragma('foreign_keys = ON');
    const ok = () => db.prepare("INSERT INTO t (v) VALUES ('x')").run().changes;
    // A deferred foreign-key violation is only detected at COMMIT, so the whole batch fails.
    const orphan = () => db.prepare('INSERT INTO c (p) VALUES (42)').run().changes;
    const results = await Promise.allSettled([queue.enqueue(ok), queue.enqueue(orphan)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(rows()).toEqual([]);
    expect(db.inTransaction).toBe(false);
  });

  it('drain flushes what is queued, then refuses new writes', async () => {
    const { queue, insert, rows } = setup(512);
    const pending = queue.enqueue(insert('a'));
    await queue.drain();
    expect(rows()).toEqual(['a']);
    await expect(pending).resolves.toBe('a');
    await expect(queue.enqueue(insert('b'))).rejects.toMatchObject({ code: 'unavailable' });
  });

  it("a patient write (a runner's) waits for a caller's write and shares its commit", async () => {
    const { queue, insert, commits } = setup(512, 60_000);
    const finish = queue.enqueue(insert('finish'), true);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(commits).toEqual([]);
    await Promise.all([queue.enqueue(insert('create')), finish]);
    expect(commits).toEqual([2]);
  });

  it('a batch of only patient writes commits after commitDelayMs on its own', async () => {
    const { queue, insert, commits, rows } = setup(512, 5);
    await Promise.all([queue.enqueue(insert('a'), true), queue.enqueue(insert('b'), true)]);
    expect(commits).toEqual([2]);
    expect(rows()).toEqual(['a', 'b']);
  });

  it('commitDelayMs 0: a patient write commits at the end of its turn', async () => {
    const { queue, insert, commits } = setup(512, 0);
    const finish = queue.enqueue(insert('finish'), true);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(commits).toEqual([1]);
    await finish;
  });

  const turns = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i += 1) await new Promise((resolve) => setImmediate(resolve));
  };

  it('while a caller blocks on a change, a patient write commits at the end of its turn', async () => {
    const { queue, insert, commits } = setup(512, 60_000);
    queue.callerWaiting(true);
    const finish = queue.enqueue(insert('finish'), true);
    await turns(2);
    expect(commits).toEqual([1]);
    await finish;
  });

  it('a caller starting to block commits the patient writes already waiting', async () => {
    const { queue, insert, commits } = setup(512, 60_000);
    const finish = queue.enqueue(insert('finish'), true);
    await turns(2);
    expect(commits).toEqual([]);
    queue.callerWaiting(true);
    await turns(2);
    expect(commits).toEqual([1]);
    await finish;
  });

  it('once no caller blocks, patient writes wait for company again', async () => {
    const { queue, insert, commits } = setup(512, 60_000);
    queue.callerWaiting(true);
    queue.callerWaiting(true);
    queue.callerWaiting(false);
    const first = queue.enqueue(insert('first'), true);
    await turns(2);
    expect(commits).toEqual([1]);
    queue.callerWaiting(false);
    const second = queue.enqueue(insert('second'), true);
    await turns(2);
    expect(commits).toEqual([1]);
    await Promise.all([queue.enqueue(insert('create')), first, second]);
    expect(commits).toEqual([1, 2]);
  });

  it('drain does not wait out the delay of patient writes', async () => {
    const { queue, insert, rows } = setup(512, 60_000);
    const finish = queue.enqueue(insert('finish'), true);
    await queue.drain();
    expect(rows()).toEqual(['finish']);
    await expect(finish).resolves.toBe('finish');
  });
});

describe('openSqliteTaskStore: commitDelayMs', () => {
  it('is refused at open, before the file is made, unless an integer from 0 to 100', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'terminus-commit-delay-'));
    try {
      const path = join(dir, 'tasks.db');
      for (const commitDelayMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, 1.5, 101, 60_000]) {
        const refused = await openSqliteTaskStore({ path, commitDelayMs }).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refused, String(commitDelayMs)).toBeInstanceOf(TerminusError);
        expect(refused).toMatchObject({ code: 'invalid_argument', details: { field: 'commitDelayMs' } });
        expect((refused as Error).message).toBe(
          `commitDelayMs must be an integer from 0 to 100 (milliseconds), got ${String(commitDelayMs)}`,
        );
        expect(existsSync(path)).toBe(false);
      }
      for (const commitDelayMs of [0, DEFAULT_COMMIT_DELAY_MS, 100, undefined]) {
        const store = await openSqliteTaskStore({ path, ...(commitDelayMs === undefined ? {} : { commitDelayMs }) });
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
