import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { requestDigest } from '../../src/core/digest.js';
import type { Logger } from '../../src/core/ports.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { killAll, terminus } from '../cli/helpers.js';

/**
 * Issue 12 item 10: damaged storage is not silent. Real files: a crash image whose WAL header is
 * damaged, a database whose `tasks` table is gone, a file that is not a database, a damaged page,
 * and `terminus serve` refusing with one line.
 */
const T0 = 1_800_000_000_000;
const dir = mkdtempSync(join(tmpdir(), 'terminus-integrity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => killAll());
let files = 0;
const fresh = (): string => join(dir, `db-${(files += 1)}.sqlite`);

function recordingLogger(): Logger & { readonly errors: string[]; readonly warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  const none = (): void => undefined;
  return {
    errors,
    warnings,
    debug: none,
    info: none,
    warn: (message) => warnings.push(message),
    error: (message) => errors.push(message),
  };
}

const newTask = (i: number) => ({
  id: `t-${i}`,
  owner: 'alice',
  tool: 'report',
  args: { i },
  requestDigest: requestDigest('report', { i }),
  submissionKey: null,
  wire: 'mcp-tasks-ext' as const,
  ttlMs: null,
  keepAliveMs: null,
  pollIntervalMs: 1000,
  now: T0 + i,
});

/** A crash image: 20 committed tasks that live only in the WAL (the copy is taken before any checkpoint). */
async function crashImage(): Promise<string> {
  const live = fresh();
  const store = await openSqliteTaskStore({ path: live });
  for (let i = 0; i < 20; i++) await store.create(newTask(i));
  const image = fresh();
  copyFileSync(live, image);
  copyFileSync(`${live}-wal`, `${image}-wal`);
  await store.close();
  return image;
}

async function readable(path: string, logger?: Logger): Promise<number> {
  const store = await openSqliteTaskStore({ path, ...(logger === undefined ? {} : { logger }) });
  try {
    return (await store.list('alice', { limit: 100 }, T0 + 100)).tasks.length;
  } finally {
    await store.close();
  }
}

describe('SQLite store: damaged storage at open', () => {
  test('a sound crash image reads all 20 tasks and logs nothing', async () => {
    const logger = recordingLogger();
    expect(await readable(await crashImage(), logger)).toBe(20);
    expect(logger.errors).toEqual([]);
    expect(logger.warnings).toEqual([]);
  });

  test('a damaged WAL header: rebuilt from the frames, nothing is lost, and a warning names the copy kept aside', async () => {
    const image = await crashImage();
    const wal = readFileSync(`${image}-wal`);
    const damagedWal = Buffer.from(wal);
    damagedWal.writeUInt32BE(0xdeadbeef, 24); // the header checksum
    writeFileSync(`${image}-wal`, damagedWal);
    const logger = recordingLogger();
    // SQLite itself ignores such a WAL (the 20 committed tasks were gone); its frames all verify.
    expect(await readable(image, logger)).toBe(20);
    expect(logger.errors).toEqual([]);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toContain(`damaged WAL header in ${image}-wal: rebuilt from its frames`);
    expect(logger.warnings[0]).toContain(`kept as ${image}-wal.damaged`);
    expect(readFileSync(`${image}-wal.damaged`).equals(damagedWal)).toBe(true);
  });

  test('a missing tasks table is refused with the file and the cause, and nothing is recreated', async () => {
    const path = fresh();
    await (await openSqliteTaskStore({ path })).close();
    const raw = new Database(path);
    raw.exec('DROP TABLE tasks');
    raw.close();
    await expect(openSqliteTaskStore({ path })).rejects.toMatchObject({
      code: 'storage_damaged',
      message: `${path}: table tasks is missing although schema_migrations records the migration that creates it`,
    });
  });

  test('a path whose folder is missing is refused naming the folder (store and ledger), and nothing is created', async () => {
    const folder = join(dir, 'missing', 'deeper');
    for (const open of [
      () => openSqliteTaskStore({ path: join(folder, 'tasks.db') }),
      async () => openSqliteLedger({ path: join(folder, 'ledger.db') }),
    ]) {
      await expect(open()).rejects.toMatchObject({
        code: 'invalid_argument',
        message: expect.stringContaining(`the folder ${folder} does not exist`),
      });
    }
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  test('a file that is not a database is refused before SQLite opens it, and left unchanged', async () => {
    const path = fresh();
    writeFileSync(path, 'name,rows\nnot,a database\n'.repeat(100));
    const before = readFileSync(path);
    await expect(openSqliteTaskStore({ path })).rejects.toMatchObject({
      code: 'storage_damaged',
      message: expect.stringMatching(new RegExp(`^${path}: not a SQLite database`)),
    });
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  test('a damaged page fails quick_check (and integrity_check behind the option) with SQLite’s complaint', async () => {
    const path = fresh();
    const store = await openSqliteTaskStore({ path });
    for (let i = 0; i < 200; i++) await store.create({ ...newTask(i), args: { i, pad: 'x'.repeat(500) } });
    await store.close();
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16);
    // Page 3 onwards holds table b-trees: scribble over the page header of one of them.
    bytes.fill(0xff, pageSize * 3, pageSize * 3 + 64);
    writeFileSync(path, bytes);
    for (const integrityCheck of ['quick', 'full'] as const) {
      const error = await openSqliteTaskStore({ path, integrityCheck }).then(
        async (opened) => (await opened.close(), undefined),
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'storage_damaged' });
      expect((error as Error).message.startsWith(`${path}: `)).toBe(true);
    }
  });

  test('terminus serve refuses a damaged database with one line naming the file and the cause, exit 1', async () => {
    const path = fresh();
    writeFileSync(path, 'this is not a database, it is a text file\n');
    const ran = await terminus(['serve', '--db', path, '--port', '0'], { cwd: dir });
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe('');
    const lines = ran.stderr.split('\n').filter((line) => line.trim() !== '');
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^terminus serve: database ${path}: not a SQLite database`)),
    ]);
  });

  test('terminus serve refuses a database with a damaged page, advising to keep the file, exit 1', async () => {
    const path = fresh();
    const store = await openSqliteTaskStore({ path });
    for (let i = 0; i < 200; i++) await store.create({ ...newTask(i), args: { i, pad: 'x'.repeat(500) } });
    await store.close();
    const bytes = readFileSync(path);
    bytes.fill(0xff, bytes.readUInt16BE(16) * 3, bytes.readUInt16BE(16) * 3 + 64);
    writeFileSync(path, bytes);
    const ran = await terminus(['serve', '--db', path, '--port', '0'], { cwd: dir });
    expect(ran.code).toBe(1);
    const lines = ran.stderr.split('\n').filter((line) => line.trim() !== '');
    const file = path.replaceAll('.', '\\.');
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^terminus serve: database ${file}: quick_check failed: .+: keep the file: its tasks are only there, and ` +
            `\`sqlite3 ${file} \\.dump\` prints the rows it can still read \\(docs/operations.md, "Damaged storage"\\); ` +
            'another path starts without them$',
        ),
      ),
    ]);
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });
});
