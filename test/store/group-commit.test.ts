import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createWriteQueue } from '../../src/store/sqlite/group-commit.js';

function setup(maxBatch: number) {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (v TEXT NOT NULL)');
  const log: string[] = [];
  const queue = createWriteQueue(db, maxBatch, (e) => e);
  const insert = (v: string) => () => {
    db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
    log.push(`ran ${v}`);
    return v;
  };
  const rows = () => db.prepare('SELECT v FROM t ORDER BY v').pluck().all();
  return { db, log, queue, insert, rows };
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
});
