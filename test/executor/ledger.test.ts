import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { requestDigest } from '../../src/core/digest.js';
import { isTerminusError } from '../../src/core/errors.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { migrateLedger, openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { LEDGER_MIGRATIONS } from '../../src/executor/ledger/sqlite-migrations.js';
import { next } from '../../src/executor/machine.js';
import { newOperation } from '../../src/executor/operation.js';
import { describeLedger } from '../../src/testing/ledger-suite.js';

const dir = mkdtempSync(join(tmpdir(), 'terminus-ledger-'));
let files = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeLedger('memory', async () => createMemoryLedger());
describeLedger('sqlite :memory:', async () => openSqliteLedger({ path: ':memory:' }));
describeLedger('sqlite file', async () => openSqliteLedger({ path: join(dir, `suite-${++files}.db`) }));

const T0 = 1_800_000_000_000;
const op = (n: number) =>
  newOperation({
    id: `op-${n}`,
    callNodeId: `node-${n}`,
    requestDigest: requestDigest('report', { n }),
    tool: { name: 'report', descriptorVersion: 'v1' },
    body: { n },
    wire: { name: 'mcp-2025-11-25', adapterVersion: '1' },
    submissionKey: `key-${n}`,
    executionEpoch: 0,
    now: T0,
    budgetMs: 60_000,
  });

describe('SQLite ledger specifics', () => {
  it('keeps operations, epoch and receipts-to-be across close and reopen', async () => {
    const path = join(dir, 'reopen.db');
    const first = openSqliteLedger({ path });
    const { operation } = await first.create(op(1));
    await first.bumpEpoch();
    await first.close();
    const second = openSqliteLedger({ path });
    expect(await second.load('op-1')).toEqual(operation);
    expect(await second.currentEpoch()).toBe(1);
    await second.close();
  });

  it('runs in WAL with synchronous=FULL and applies each migration once', async () => {
    const path = join(dir, 'pragmas.db');
    const ledger = openSqliteLedger({ path });
    await ledger.close();
    const db = new Database(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(migrateLedger(db)).toEqual([]);
    expect(db.prepare('SELECT id FROM ledger_migrations').pluck().all()).toEqual([1, 2, 3]);
    db.close();
  });

  it('migration 3 adds the session column to a ledger written before it: its operations load without a session', async () => {
    const path = join(dir, 'before-sessions.db');
    const old = new Database(path);
    old.exec('CREATE TABLE ledger_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL) STRICT');
    for (const m of LEDGER_MIGRATIONS.filter((m) => m.id < 3)) {
      old.exec(m.sql);
      old.prepare('INSERT INTO ledger_migrations (id, name) VALUES (?, ?)').run(m.id, m.name);
    }
    const { revision: _r, ...record } = op(10);
    old
      .prepare(
        `INSERT INTO operations (id, call_node_id, request_digest, submission_key, task_id, state, revision,
           execution_epoch, updated_at, record) VALUES (?, ?, ?, ?, NULL, 'SUBMITTING', 1, 0, ?, ?)`,
      )
      .run(record.id, record.callNodeId, record.requestDigest, record.submissionKey, T0, JSON.stringify(record));
    old.close();
    const ledger = openSqliteLedger({ path });
    const loaded = await ledger.load('op-10');
    expect(loaded?.callNodeId).toBe('node-10');
    expect(loaded?.session).toBeUndefined();
    await ledger.close();
  });

  it('a session is stored in its own column, never in the record column', async () => {
    const path = join(dir, 'session-column.db');
    const ledger = openSqliteLedger({ path });
    await ledger.create({ ...op(11), session: { id: 'sid-never-in-record', protocolVersion: '2025-11-25' } });
    await ledger.close();
    const db = new Database(path, { readonly: true });
    const row = db.prepare("SELECT record, session FROM operations WHERE id = 'op-11'").get() as Record<string, string>;
    db.close();
    expect(row.record).not.toContain('sid-never-in-record');
    expect(JSON.parse(row.session!)).toEqual({ id: 'sid-never-in-record', protocolVersion: '2025-11-25' });
  });

  it('a ledger file it creates is readable by its owner only (0600): it holds session ids', async () => {
    const path = join(dir, 'private.db');
    const ledger = openSqliteLedger({ path });
    await ledger.create({ ...op(12), session: { id: 'sid', protocolVersion: '2025-11-25' } });
    for (const file of [path, `${path}-wal`]) expect(statSync(file).mode & 0o777).toBe(0o600);
    await ledger.close();
  });

  it('two connections on one file: only one of two steps from the same revision lands', async () => {
    const path = join(dir, 'two.db');
    const a = openSqliteLedger({ path });
    const b = openSqliteLedger({ path });
    const { operation } = await a.create(op(2));
    const sent = next(operation, { type: 'submit_sent', epoch: 0 }, T0 + 1, 0.5);
    const lost = next(operation, { type: 'submit_lost', epoch: 0, reason: 'timeout' }, T0 + 1, 0.5);
    const results = await Promise.allSettled([
      a.apply({ record: sent.record, expectedRevision: 1 }),
      b.apply({ record: lost.record, expectedRevision: 1 }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const failure = results.find((r) => r.status === 'rejected');
    expect(isTerminusError(failure?.reason, 'revision_conflict')).toBe(true);
    expect((await b.load('op-2'))?.revision).toBe(2);
    await a.close();
    await b.close();
  });
});

/**
 * A damaged ledger is refused at open, as the task store is (issue 12 item 10): opened in silence
 * it would forget operations, and their calls, made again, would be submitted again.
 */
describe('SQLite ledger: damaged files at open', () => {
  const withOperations = async (name: string, count: number): Promise<string> => {
    const path = join(dir, name);
    const ledger = openSqliteLedger({ path });
    for (let n = 0; n < count; n++) await ledger.create({ ...op(1000 + n), body: { n, pad: 'x'.repeat(400) } });
    await ledger.close();
    return path;
  };
  const refusal = async (path: string): Promise<unknown> => {
    try {
      await openSqliteLedger({ path }).close();
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it('a damaged page fails quick_check: storage_damaged, corrupt, the file untouched', async () => {
    const path = await withOperations('paged.db', 200);
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16);
    bytes.fill(0xff, pageSize * 3, pageSize * 3 + 64);
    writeFileSync(path, bytes);
    expect(await refusal(path)).toMatchObject({
      code: 'storage_damaged',
      message: expect.stringMatching(new RegExp(`^${path}: quick_check failed: `)),
      details: { path, damage: 'corrupt' },
    });
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it('a truncated file is corrupt, a foreign one is not_sqlite; neither is changed', async () => {
    const truncated = await withOperations('truncated.db', 200);
    truncateSync(truncated, 8192);
    expect(await refusal(truncated)).toMatchObject({ code: 'storage_damaged', details: { damage: 'corrupt' } });
    expect(statSync(truncated).size).toBe(8192);
    const foreign = join(dir, 'notes.db');
    writeFileSync(foreign, 'my notes\n'.repeat(100));
    expect(await refusal(foreign)).toMatchObject({
      code: 'storage_damaged',
      message: expect.stringMatching(new RegExp(`^${foreign}: not a SQLite database`)),
      details: { damage: 'not_sqlite' },
    });
    expect(readFileSync(foreign, 'utf8')).toBe('my notes\n'.repeat(100));
  });

  /** A crash image of a ledger: 5 operations, one transaction each, only in the WAL of the copy. */
  const walImage = async (name: string): Promise<string> => {
    const live = join(dir, `${name}-live.db`);
    const ledger = openSqliteLedger({ path: live });
    for (let n = 0; n < 5; n++) await ledger.create(op(2000 + n));
    const image = join(dir, `${name}.db`);
    copyFileSync(live, image);
    copyFileSync(`${live}-wal`, `${image}-wal`);
    await ledger.close();
    return image;
  };
  const recorded = (): { lines: string[]; logger: Parameters<typeof openSqliteLedger>[0]['logger'] } => {
    const lines: string[] = [];
    const none = (): void => undefined;
    return {
      lines,
      logger: {
        debug: none,
        info: none,
        warn: (message) => lines.push(`warn ${message}`),
        error: (message) => lines.push(`error ${message}`),
      },
    };
  };

  it('a damaged WAL header: rebuilt from the frames, every operation is there, the copy is named', async () => {
    const image = await walImage('wal-header');
    const wal = readFileSync(`${image}-wal`);
    wal.writeUInt32BE(0xdeadbeef, 24);
    writeFileSync(`${image}-wal`, wal);
    const { lines, logger } = recorded();
    const opened = openSqliteLedger({ path: image, ...(logger === undefined ? {} : { logger }) });
    for (let n = 0; n < 5; n++) expect(await opened.load(`op-${2000 + n}`)).not.toBeNull();
    await opened.close();
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^warn damaged WAL header in ${image}-wal: rebuilt from its frames`)),
    ]);
    expect(readFileSync(`${image}-wal.damaged`).equals(wal)).toBe(true);
  });

  it('a WAL cut inside a frame: the operations before the cut are kept, and the dropped frames are named', async () => {
    const image = await walImage('wal-cut');
    const size = statSync(`${image}-wal`).size;
    truncateSync(`${image}-wal`, size - 1000);
    const { lines, logger } = recorded();
    const opened = openSqliteLedger({ path: image, ...(logger === undefined ? {} : { logger }) });
    const kept = [];
    for (let n = 0; n < 5; n++) if ((await opened.load(`op-${2000 + n}`)) !== null) kept.push(n);
    await opened.close();
    expect(kept).toEqual([0, 1, 2, 3]);
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(`^warn WAL ${image}-wal: .*byte\\(s\\) of a frame cut short after the last commit SQLite keeps`),
      ),
    ]);
    expect(lines[0]).toContain(`the WAL was copied to ${image}-wal.torn`);
  });
});
